// WHIP and WHEP endpoints on the internal surface: the contract's routes (contract.ts) -> ops -> views.
import type { Context } from 'hono';
import type { AppEnv } from '../../../http/env.js';
import type { FamilyMedia } from '../../ops/index.js';
import { closeWhepEndpoint, closeWhipEndpoint, createWhepEndpoint, createWhipEndpoint } from './contract.js';
import type * as ops from './ops.js';
import type { MintedEndpoint } from './ops.js';
import { relayRouter, withJsonBody } from '../../http/router.js';

/** What the routes read of the family settings (kinds/index.ts FamilySettings). */
interface WhipSettings {
  readonly trustProxy?: 'none' | 'fly' | 'xff';
}

export function whipRoutes(media: FamilyMedia<typeof ops>, settings: WhipSettings) {
  return relayRouter()
    .openapi(withJsonBody(createWhipEndpoint), async (c) => {
      const minted = await media.forRequest(c.get('requestId')).createWhipEndpoint(c.req.valid('json'), originOf(c, settings));
      return c.json(mintedView(minted), 201);
    })
    .openapi(withJsonBody(createWhepEndpoint), async (c) => {
      const minted = await media.forRequest(c.get('requestId')).createWhepEndpoint(c.req.valid('json'), originOf(c, settings));
      return c.json(mintedView(minted), 201);
    })
    .openapi(closeWhipEndpoint, (c) => {
      media.closeWhipEndpoint(c.req.valid('param').id);
      return c.body(null, 204);
    })
    .openapi(closeWhepEndpoint, (c) => {
      media.closeWhepEndpoint(c.req.valid('param').id);
      return c.body(null, 204);
    });
}

function mintedView({ endpoint, token }: MintedEndpoint) {
  return { id: endpoint.id, url: endpoint.url, token, expiresAt: endpoint.expiresAt.toISOString() };
}

const HOST = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?$/;

/**
 * The public origin as the client reaches it when WHIP_PUBLIC_URL is unset: the forwarded host and
 * protocol under TRUST_PROXY, else this request's own (a host that is not a host name is not used).
 */
function originOf(c: Context<AppEnv>, settings: WhipSettings): string {
  const own = new URL(c.req.url);
  if (settings.trustProxy !== undefined && settings.trustProxy !== 'none') {
    const host = c.req.header('x-forwarded-host')?.split(',')[0]?.trim();
    const proto = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim();
    if (host && HOST.test(host)) return `${proto === 'http' ? 'http' : 'https'}://${host}`;
  }
  return own.origin;
}
