// Plain RTP transports: the contract's routes (contract.ts) -> ops -> views.
import type { types as ms } from 'mediasoup';
import type { z } from 'zod';
import { closePlainTransport, connectPlainTransport, createPlainTransport, type plainTransportSchema } from './contract.js';
import type { FamilyMedia } from '../../ops/index.js';
import type * as ops from './ops.js';
import type { PlainTransportEntry } from './row.js';
import { relayRouter, withJsonBody } from '../../http/router.js';

export function plainRoutes(media: FamilyMedia<typeof ops>) {
  return relayRouter()
    .openapi(withJsonBody(createPlainTransport), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).createPlainTransport(c.req.valid('json'));
      return c.json(plainTransportView(entry), 201);
    })
    .openapi(withJsonBody(connectPlainTransport), async (c) => {
      const entry = await media.forRequest(c.get('requestId')).connectPlainTransport(c.req.valid('param').id, c.req.valid('json'));
      return c.json({ id: entry.plainTransport.id, connected: true as const }, 200);
    })
    .openapi(closePlainTransport, (c) => {
      media.closePlainTransport(c.req.valid('param').id);
      return c.body(null, 204);
    });
}

export function plainTransportView({ plainTransport, routerId, comedia, rtcpMux }: PlainTransportEntry): z.output<typeof plainTransportSchema> {
  const { ip, port } = localAddressOf(plainTransport.tuple);
  const rtcp = plainTransport.rtcpTuple;
  const srtp = plainTransport.srtpParameters;
  return {
    id: plainTransport.id,
    routerId,
    ip,
    port,
    ...(rtcp && !rtcpMux ? { rtcpPort: localAddressOf(rtcp).port } : {}),
    comedia,
    rtcpMux,
    ...(srtp ? { srtpParameters: { cryptoSuite: srtp.cryptoSuite, keyBase64: srtp.keyBase64 } } : {}),
  };
}

/** mediasoup 3.11 calls it `localIp`, upstream `localAddress` (the announced address when one is set). */
function localAddressOf(tuple: ms.TransportTuple): { ip: string; port: number } {
  const local = tuple as unknown as { localIp?: string; localAddress?: string; localPort: number };
  return { ip: (local.localAddress ?? local.localIp)!, port: local.localPort };
}
