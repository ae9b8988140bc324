// The account area's vocabulary, assembled from what each feature contributes (its vocabulary.ts):
// the envelope codes, the one error table, the audit event types, the ways a session is opened and
// the second factors as the texts that name them all say them.
// Services throw `AuthError(kind)` of this table; the /api handler and the documents answer from it.
import * as account from './account/vocabulary.js';
import * as devices from './devices/vocabulary.js';
import * as email from './email/vocabulary.js';
import * as moderation from './moderation/vocabulary.js';
import * as oidc from './oidc/vocabulary.js';
import * as passkeys from './passkeys/vocabulary.js';
import * as password from './password/vocabulary.js';
import * as reauth from './reauth/vocabulary.js';
import * as reset from './reset/vocabulary.js';
import * as sessions from './sessions/vocabulary.js';
import * as shared from './shared/vocabulary.js';
import * as totp from './totp/vocabulary.js';

export type { AccountErrorRow, SecondFactorWords } from './shared/vocabulary.js';

/**
 * The second factors, in the order of their removal (the audit detail's, and the fields' of a
 * clearing's answer and event): how the texts that name every one of them say each.
 */
export const SECOND_FACTORS: readonly shared.SecondFactorWords[] = [passkeys.secondFactor, totp.secondFactor];

/**
 * The second factors' `words` joined with `separator`, e.g. `secondFactorsSaid('named', ' and ')`:
 * "passkeys and two-factor sign-in". `lastFirst`: the order in which an operator's clearing first
 * named them (its summary, its event's description, its notice's subject), kept as published.
 */
export function secondFactorsSaid(words: 'parts' | 'named' | 'every' | 'adding', separator: string, order: 'listed' | 'lastFirst' = 'listed'): string {
  const factors = order === 'listed' ? SECOND_FACTORS : [...SECOND_FACTORS].reverse();
  return factors.map((factor) => factor[words]).join(separator);
}

/** What an operator's clearing of every second factor answers and publishes of each factor (schemas, then values from the removal's counts). */
export const CLEARED_FACTOR_FIELDS = {
  answer: { ...passkeys.secondFactor.cleared.answer, ...totp.secondFactor.cleared.answer },
  event: { ...passkeys.secondFactor.cleared.event, ...totp.secondFactor.cleared.event },
};
export function clearedFactorValues(counts: Readonly<Record<string, number>>) {
  const [p, t] = [passkeys.secondFactor.cleared.values(counts[passkeys.secondFactor.name] ?? 0), totp.secondFactor.cleared.values(counts[totp.secondFactor.name] ?? 0)];
  return { answer: { ...p.answer, ...t.answer }, event: { ...p.event, ...t.event } };
}

/** The meanings of the rows that name what several features contribute. */
const MEANINGS: shared.AssembledMeanings = {
  rateLimited: shared.rateLimitedMeaning([...shared.failureBudgetActions, ...totp.failureBudgetActions]),
  addingFactors: secondFactorsSaid('adding', ' or '),
};

/** The envelope codes: 0 for success, 1xxx for any endpoint, 2xxx for account rules. */
export const ApiCode = { ...shared.SharedCode, ...sessions.codes, ...reset.codes, ...totp.codes, ...email.codes, ...passkeys.codes, ...reauth.codes, ...oidc.codes };
export type ApiCode = (typeof ApiCode)[keyof typeof ApiCode];

/** Every failure of the area by kind: its envelope code, HTTP status, default message and meaning. */
export const ACCOUNT_ERRORS = {
  ...shared.errors(MEANINGS),
  ...sessions.errors,
  ...devices.errors,
  ...reset.errors(MEANINGS),
  ...totp.errors,
  ...email.errors(MEANINGS),
  ...passkeys.errors,
  ...reauth.errors,
  ...oidc.errors,
};
export type AccountErrorKind = keyof typeof ACCOUNT_ERRORS;

/** The audit trail's event types (the order is the documents' enum order). */
export const AUTH_EVENT_TYPES = [
  ...sessions.auditTypes,
  ...password.auditTypes,
  ...reset.auditTypes,
  ...account.auditTypes,
  ...moderation.auditTypes,
  ...email.auditTypes,
  ...totp.auditTypes,
  ...passkeys.auditTypes,
  ...reauth.auditTypes,
  ...oidc.auditTypes,
  ...shared.auditTypes,
] as const;
export type AuthEventType = (typeof AUTH_EVENT_TYPES)[number];

/** How a session was opened (a device's `method`). */
export const SIGN_IN_METHODS = [...sessions.signInMethods, ...totp.signInMethods, ...passkeys.signInMethods] as const;
/**
 * The ways of opening a session that name a configured part (`oidc:<provider>`), beside SIGN_IN_METHODS,
 * and the same followed by the login's second step (`oidc:<provider>+totp`).
 */
export const SIGN_IN_METHOD_FORMS = [oidc.signInMethod, totp.afterFirstFactor(oidc.signInMethod)] as const;

/** Why a session ended, as auth.session.ended says it (the order is the event's enum order). */
export const SESSION_END_REASONS = [...shared.sessionEndReasons, ...email.sessionEndReasons] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

/** Who ended a session (session_ended's `detail`); each feature's map gives the reason its auth.session.ended says. */
export type SessionEndedBy = keyof typeof shared.sessionEndedBy | keyof typeof email.sessionEndedBy;

/** The fields features add to the owner's and to an operator's view of a user (schemas, then values). */
export const OWNER_VIEW_FIELDS = { ...email.userViewFields.owner };
export const OPERATOR_USER_FIELDS = { ...email.userViewFields.operator };
export const userViewFieldValues = (user: Parameters<typeof email.userViewFields.values>[0]) => ({ ...email.userViewFields.values(user) });
