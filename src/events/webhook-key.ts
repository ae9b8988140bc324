// The Standard Webhooks signature of a webhook delivery (webhook-id, webhook-timestamp,
// webhook-signature), shared by the sink that signs and the typed client that verifies, so both read
// EVENTS_WEBHOOK_SECRET the same way. A leaf: node:crypto only (the client's bundle includes it).
import { createHmac } from 'node:crypto';

export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';
/** The spec's prefix of a secret given as base64 (what Svix and the reference libraries hand out). */
export const STANDARD_SECRET_PREFIX = 'whsec_';

// Padded standard base64 only: the JavaScript reference library would decode a few other spellings
// (a stray `=`), Go's `base64.StdEncoding` refuses them, and a secret two receivers read differently
// would fail one of them on every delivery.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key of the Standard Webhooks signature: for a secret written `whsec_<base64>`, the decoded
 * bytes, as the spec says (`new Webhook(secret)` of the `standardwebhooks` package, Go's
 * `NewWebhook(secret)`); for any other secret, its UTF-8 bytes as given (`new Webhook(secret, { format:
 * 'raw' })`, Go's `NewWebhookRaw([]byte(secret))`). Throws for a `whsec_` secret whose rest is not
 * padded standard base64 of at least one byte.
 */
export function standardWebhooksKey(secret: string): Buffer {
  if (!secret.startsWith(STANDARD_SECRET_PREFIX)) return Buffer.from(secret, 'utf8');
  const encoded = secret.slice(STANDARD_SECRET_PREFIX.length);
  if (encoded === '' || !BASE64.test(encoded)) {
    throw new TypeError(`a webhook secret that starts with ${STANDARD_SECRET_PREFIX} must be padded standard base64 after it (the Standard Webhooks form)`);
  }
  return Buffer.from(encoded, 'base64');
}

/** `v1,<base64>`: HMAC-SHA256 of `<id>.<timestamp>.<raw body>` under the key. */
export function signStandardWebhook(key: Uint8Array, id: string, timestamp: number, body: string | Uint8Array): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`, 'utf8').update(body).digest('base64')}`;
}
