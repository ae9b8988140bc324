// POST /email/verify, /email/verify/resend, PUT /email and POST /email/confirm.
import type { MiddlewareHandler } from 'hono';
import { changeEmail, confirmEmail, resendEmailVerification, verifyEmail } from './contract.js';
import { AuthError } from '../shared/auth-error.js';
import { ok } from '../shared/envelope.js';
import type { EmailService } from './service.js';
import { createRouter, type RouteKit } from '../shared/route-kit.js';

export function emailRoutes(kit: RouteKit, email: EmailService) {
  // Without mail no code can be sent: the endpoints do not exist (1004), checked before the body is read.
  const mailEnabled: MiddlewareHandler = async function mailEnabled(_c, next) {
    if (!email.available) throw new AuthError('mail_disabled', 'e-mail codes are not available: mail is not configured');
    await next();
  };
  const guarded = [kit.apiLimit, mailEnabled, kit.requireSession];
  return createRouter()
    .openapi({ ...verifyEmail, middleware: guarded }, async (c) => {
      const verified = await email.verify(c.var.auth, c.req.valid('json').code, kit.sessionClient(c));
      return ok(c, { email: verified.email, email_verified: true as const });
    })
    .openapi({ ...resendEmailVerification, middleware: guarded }, async (c) => {
      await email.resend(c.var.auth);
      return ok(c, null);
    })
    // A password check and a code mailed to any address: the auth budget per client, as a login's.
    .openapi({ ...changeEmail, middleware: [kit.authLimit, mailEnabled, kit.requireSession] }, async (c) => {
      const { new_email, password } = c.req.valid('json');
      await email.requestChange(c.var.auth, new_email, password, kit.sessionClient(c));
      return ok(c, null);
    })
    .openapi({ ...confirmEmail, middleware: guarded }, async (c) => {
      const confirmed = await email.confirmChange(c.var.auth, c.req.valid('json').code, kit.sessionClient(c));
      return ok(c, { email: confirmed.email, email_verified: true as const });
    });
}
