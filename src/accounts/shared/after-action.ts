// A rule shared by the account actions: work after an action that has happened never undoes its answer.
import type { Logger } from '../../logger.js';

/**
 * Work after an action that has already happened (the session cap, audit rows): a failure here is
 * logged, and the caller still gets the answer of the action, which stands.
 */
export async function afterwards(logger: Logger, what: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    logger.error({ err: error instanceof Error ? error.message : String(error) }, `account API: ${what} failed after the action succeeded`);
  }
}
