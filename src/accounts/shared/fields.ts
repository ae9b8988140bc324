// The field rules of the account API's request bodies, shared by the families' contracts;
// messages name the rule. Also the text helpers that decide what can be stored and served.
import { z } from 'zod';

/** Length in characters (code points), not UTF-16 units or bytes, as the rules and PostgreSQL count. */
export function characterCount(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/**
 * PostgreSQL text cannot hold U+0000 (the query fails: a 500 for a client's typo), and an unpaired
 * surrogate reaches the database as U+FFFD (stored other than sent). Fields that are stored or
 * looked up refuse both.
 */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const TEXT_RULE = 'must not contain a NUL character or an unpaired surrogate, nor begin with U+FEFF';
/**
 * PostgreSQL text cannot hold U+0000; an unpaired surrogate would be stored as U+FFFD; and the
 * embedded PGlite decodes each text value with a TextDecoder that drops a leading U+FEFF (a value
 * "\uFEFFx" reads back as "x"): none of them could be stored as sent.
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && !UNPAIRED_SURROGATE.test(value) && !value.startsWith('\uFEFF');
}

/**
 * C0 and C1 controls (DEL too) and Unicode's bidi formatting characters (marks, embeddings,
 * overrides, isolates): in an identifier they can only hide what it is (ESC sequences repaint an
 * operator's terminal, U+202E reverses what follows); identifiers refuse them.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point: identifiers refuse them
const CONTROL_OR_BIDI = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
export function hasNoControlCharacters(value: string): boolean {
  return !CONTROL_OR_BIDI.test(value);
}

/** Line and column breaks of any kind. */
const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;
// eslint-disable-next-line no-control-regex -- matching control characters is the point: stored text drops them
const CONTROL_BIDI_OR_BOM = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * Free text a client sends and the service stores and serves (a User-Agent): breaks become one
 * space, other controls, bidi formatting characters and U+FEFF are removed, printable text is kept.
 * @example printableText('Agent\u001b[31m\tX') // 'Agent[31m X'
 */
export function printableText(value: string): string {
  return value.replace(BREAKS, ' ').replace(CONTROL_BIDI_OR_BOM, '');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
/** A UTF-8 sequence of 2-4 bytes, as latin1 characters (the decoder still refuses overlongs and surrogates). */
const UTF8_SEQUENCE = /[\u00c2-\u00df][\u0080-\u00bf]|[\u00e0-\u00ef][\u0080-\u00bf]{2}|[\u00f0-\u00f4][\u0080-\u00bf]{3}/g;

/**
 * A header value as text: Node hands header bytes over as latin1 characters, so a UTF-8 value (a
 * bidi override, an accented name) arrives as several characters, C1 controls among them. Each
 * valid UTF-8 sequence is read as the character it encodes; other bytes stay as they came.
 */
export function headerText(value: string): string {
  // eslint-disable-next-line no-control-regex -- any character above Latin-1 means the header was not bytes read as Latin-1
  if (/[^\u0000-\u00ff]/.test(value)) return value;
  return value.replace(UTF8_SEQUENCE, (bytes) => {
    try {
      return strictUtf8.decode(Buffer.from(bytes, 'latin1'));
    } catch {
      return bytes;
    }
  });
}

export const between = (value: string, min: number, max: number) => {
  const n = characterCount(value);
  return n >= min && n <= max;
};

/** A missing field says so; any other failure (wrong type included) states the rule. */
export const rule = (message: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : message),
});

export const RULES = {
  username: '3-50 letters, digits or underscores',
  email: 'a valid e-mail address of at most 254 characters',
  password: '6-50 characters',
  nickname: '1-50 characters',
  avatar: 'an empty string or an http(s) URL of at most 512 characters',
  gender: '0 (unknown), 1 (male) or 2 (female)',
  phone: 'an empty string or 5-20 digits, spaces, +, -, ( or )',
  account: 'a username or an e-mail address',
  required: 'a non-empty string',
} as const;

export const username = z.string(rule(RULES.username)).regex(/^[A-Za-z0-9_]{3,50}$/, RULES.username);
export const email = z
  .email(rule(RULES.email))
  .max(254, RULES.email)
  .transform((value) => value.toLowerCase());
export const password = z.string(rule(RULES.password)).refine((value) => between(value, 6, 50), RULES.password);
export const nickname = z
  .string(rule(RULES.nickname))
  .refine((value) => between(value, 1, 50), RULES.nickname)
  .refine(isStorableText, TEXT_RULE);
export const avatar = z
  .string(rule(RULES.avatar))
  .refine((value) => value === '' || (characterCount(value) <= 512 && isHttpUrl(value)), RULES.avatar)
  .refine(isStorableText, TEXT_RULE);
// The generator of the document reads only the first value of a multi-value literal: its values stated.
export const gender = z.literal([0, 1, 2], rule(RULES.gender)).meta({ enum: [0, 1, 2] });
export const phone = z.string(rule(RULES.phone)).regex(/^(?:[0-9 +()-]{5,20})?$/, RULES.phone);
export const nonEmpty = (message: string) => z.string(rule(message)).min(1, message);

function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** The current password to confirm a destructive action; bounded like any field (a longer one can never be right). */
export const currentPassword = nonEmpty(RULES.required).refine((value) => characterCount(value) <= 1024, 'at most 1024 characters');
