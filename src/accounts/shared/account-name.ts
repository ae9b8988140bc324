// How an account name typed at login (a username or an e-mail address) finds its account. The
// database does the comparing, with its own lower(): the lookup and the failure budget of a name that
// finds no account both read the name as the database folds it, so no spelling (`İ` for `i`, the
// Kelvin sign for `k`) reaches an account without counting in that account's budget.
import { sql, type SQL } from 'drizzle-orm';
import { users } from '../../db/schema.js';

/** The name as the database folds it for the comparison. */
export function foldedAccount(account: string): SQL<string> {
  return sql<string>`lower(${account}::text)`;
}

/**
 * The row the name finds: with an `@` an e-mail address (stored lower-cased), otherwise a username
 * (unique as lower(username)); both compared with the name folded by foldedAccount.
 */
export function accountMatches(account: string): SQL {
  return account.includes('@') ? sql`${users.email} = ${foldedAccount(account)}` : sql`lower(${users.username}) = ${foldedAccount(account)}`;
}
