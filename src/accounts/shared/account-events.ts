// Account events are written to the event log by the statement that makes the change they report
// (a transactional outbox: a ban and its auth.user.banned exist both or neither; a crash right after
// the commit loses nothing). Each feature adds these CTEs last to its statement's `db.with(...)`; the
// event log's follower hands them to the stream and the webhook (src/events/log/tail.ts).
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { logEvents } from '../../events/log/log.js';
import { formatTime } from '../../time.js';
import type { AccountEventType, SessionEndReason } from '../events.js';

/**
 * Events of one type, one per row that `from` selects (a subquery of the statement: zero rows, no
 * event); `fields` are the event's members after `type`, as SQL over those rows (alias `r`).
 */
export interface AccountEventRows {
  type: AccountEventType;
  from: SQL;
  fields: Readonly<Record<string, SQL>>;
}

/**
 * auth.session.ended for each session a CTE of the statement ended; `ended` selects user_id and
 * public_id (e.g. sql`select user_id, public_id from ${endedCte}`).
 */
export function sessionsEnded(ended: SQL, reason: SessionEndReason): AccountEventRows {
  return { type: 'auth.session.ended', from: ended, fields: { userId: sql`r.user_id`, sessionId: sql`r.public_id::text`, reason: sql`${reason}::text` } };
}

/** An event about the user that `from` selects as user_id (none when it selects no row), with `fields` beside `userId`. */
export function userEvent(type: Exclude<AccountEventType, 'auth.session.ended'>, from: SQL, fields: Readonly<Record<string, SQL>> = {}): AccountEventRows {
  return { type, from, fields: { userId: sql`r.user_id`, ...fields } };
}

/**
 * The CTEs that write `events` to the event log, stamped `at` (formatted here, so a service's clock
 * holds), in the order given: put them last in the statement's `db.with(...)`. The JSON has the
 * members the bus gave these events (type, fields, time); the log gives the id.
 * @example
 * const ended = db.$with('ended').as(db.delete(sessions).where(...).returning({ userId: sessions.userId, publicId: sessions.publicId }))
 * await db.with(ended, ...accountEventRows(db, now(), sessionsEnded(sql`select user_id, public_id from ${ended}`, 'logout'))).select().from(ended)
 */
export function accountEventRows(db: Db, at: Date, ...events: readonly AccountEventRows[]) {
  const time = formatTime(at);
  const selects = events.map(({ type, from, fields }, ord) => {
    const members = sql.join(
      Object.entries(fields).map(([name, value]) => sql`${value} as ${sql.identifier(name)}`),
      sql`, `,
    );
    // row_to_json writes compact JSON in the columns' order, as JSON.stringify does for the bus's
    // events (json_build_object would put spaces around every colon).
    const json = sql`(select row_to_json(e)::text from (select ${type}::text as "type", ${members}, ${time}::text as "time") as e)`;
    return sql`select ${type}::text as type, ${json} as payload, ${ord}::int as ord from (${from}) as r`;
  });
  return logEvents(db, sql.join(selects, sql` union all `));
}
