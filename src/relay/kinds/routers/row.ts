// The router's row in the kinds table (kinds/index.ts): a room, named by its first router.
import type { RouterEntry } from '../../registry/entries.js';
import { kindRow } from '../row.js';

export const ROUTER_KINDS = {
  router: kindRow<RouterEntry>()({
    name: 'router',
    plural: 'routers',
    parents: [],
    closeWith: [],
    closed: ({ router }, reason) => ({ type: 'router.closed', routerId: router.id, appData: router.appData, reason: reason as never }),
  }),
};
