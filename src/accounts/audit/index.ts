// The audit trail, read by operators on the internal surface.
import type { AccountFeature } from '../feature.js';
import { auditRoutes } from './routes.js';

export const auditFeature: AccountFeature = { mounts: ({ audit }) => [{ prefix: '/internal', surface: 'internal', routes: auditRoutes(audit) }] };
