// The process: config -> database -> compose() -> listen; graceful shutdown on SIGTERM/SIGINT.
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { App } from './app.js';
import { SigningKeySecretError } from './accounts/sessions/signing-keys.js';
import { compose, type Composition } from './compose.js';
import { ConfigError, loadConfig, type Config } from './config/index.js';
import { openDatabase } from './db/client.js';
import { connectFailure, DatabaseUnreachableError, waitForDatabase } from './db/connect.js';
import { migrateDatabase } from './db/migrate.js';
import { seedFromTemplate } from './db/pglite-template.js';
import { prepareDataDir, PRIVATE_UMASK } from './data-dir.js';
import { createLogger, createLogOutput } from './logger.js';
import { AuthKeys, resolveAuthKeySecret } from './secrets/auth-key.js';
import { internalTokenNotice, resolveInternalToken } from './secrets/internal-token.js';

const SHUTDOWN_DEADLINE_MS = 4000;
/** After a drain timeout closed the rooms left, how long the open event streams get to carry that. */
const DRAIN_EVENTS_GRACE_MS = 200;

// A reader of stdout or stderr that went away (EPIPE) must neither crash the service nor hold it:
// what they would have carried is lost, nothing else. The log lines have their own handling (logger.ts).
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}

const pretty = process.argv.includes('--pretty');
// `npm run dev` pretty-prints through pino's transport; otherwise JSON lines on stdout, whose final
// flush at exit is bounded (logOutput.close) whatever became of the reader.
const logOutput = pretty ? undefined : createLogOutput();
const logger = createLogger({ level: config.logLevel, pretty, ...(logOutput ? { destination: logOutput.stream } : {}) });

process.umask(PRIVATE_UMASK);
try {
  await prepareDataDir(config.dataDir, logger);
} catch (error) {
  logger.fatal({ err: error }, `DATA_DIR ${config.dataDir} could not be prepared`);
  await logOutput?.close(1000);
  process.exit(1);
}

let internalToken: string;
try {
  const resolved = await resolveInternalToken(config);
  internalToken = resolved.value;
  const notice = internalTokenNotice(resolved);
  if (notice) process.stdout.write(notice);
} catch (error) {
  logger.fatal({ err: error }, 'INTERNAL_TOKEN could not be set up');
  await logOutput?.close(1000);
  process.exit(1);
}

let authKeys: AuthKeys;
try {
  authKeys = new AuthKeys(await resolveAuthKeySecret(config, logger));
} catch (error) {
  logger.fatal({ err: error }, 'AUTH_KEY_SECRET could not be set up');
  process.exit(1);
}

const startedDatabase = performance.now();
if (config.database.kind === 'pglite' && config.database.dataDir !== undefined) {
  try {
    await seedFromTemplate(config.database.dataDir, logger);
  } catch (error) {
    // The template is a shortcut: without it the database is created as before.
    logger.warn({ err: error }, 'the migrated template of the embedded database could not be copied: creating the database instead');
  }
}
const database = await openDatabase(config.database);
try {
  if (config.database.kind === 'postgres') {
    await waitForDatabase(database, { url: config.database.url, timeoutMs: config.databaseConnectTimeoutS * 1000, logger });
  }
  await migrateDatabase(database);
} catch (error) {
  // One line, never a stack trace or the URL's password: what the operator has to fix is in the message.
  const message = error instanceof DatabaseUnreachableError ? error.message : `DATABASE_URL: the database could not be prepared: ${connectFailure(error)}`;
  logger.fatal(message);
  await database.close().catch(() => {});
  await logOutput?.close(1000);
  process.exit(1);
}
logger.info({ database: database.kind, durationMs: Math.round(performance.now() - startedDatabase) }, 'database ready');

let composition: Composition;
try {
  composition = await compose(config, { logger, database, internalToken, authKeys });
} catch (error) {
  // A port in use is the usual cause: the message names RTC_MIN_PORT/RTC_MAX_PORT and is enough.
  if (isAddressInUse(error)) logger.fatal(`media service failed to start: ${(error as Error).message}`);
  else logger.fatal({ err: error }, 'media service failed to start');
  await database.close();
  // The fatal line gets a second to reach stdout, never more (a reader that is gone is not waited on).
  await logOutput?.close(1000);
  process.exit(1);
}
logger.info({ rateLimits: composition.rateLimitStores.mode() }, 'rate limits ready');

try {
  // Every instance on one database must share AUTH_KEY_SECRET: one that cannot open the stored
  // signing keys would answer 500 to every login, so it does not start.
  await composition.accounts?.signingKeys.checkSecret();
} catch (error) {
  logger.fatal(error instanceof SigningKeySecretError ? error.message : `the token signing keys could not be prepared: ${connectFailure(error)}`);
  await composition.stop();
  await logOutput?.close(1000);
  process.exit(1);
}
const media = composition.relay!.media;

const servers: Server[] = [];
let shuttingDown = false;

/**
 * Once shutdown has begun, every answer asks its client to close the connection: a keep-alive
 * client that keeps sending then leaves after its current request instead of holding the server
 * open until the forced close.
 */
function closingWhenShuttingDown(app: App) {
  return async function fetch(request: Request, env: unknown): Promise<Response> {
    const response = await app.fetch(request, env);
    if (!shuttingDown) return response;
    try {
      response.headers.set('Connection', 'close');
      return response;
    } catch {
      // Immutable headers (a Response made by fetch()): answer with a copy.
      const headers = new Headers(response.headers);
      headers.set('Connection', 'close');
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    }
  };
}

/** http://host:port as a browser on this machine reaches it: a wildcard address becomes localhost. */
function browsableUrl(address: string, port: number): string {
  const host = address === '0.0.0.0' || address === '::' ? 'localhost' : address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${port}`;
}

/** Whether a start-up error (or its cause) is a port already taken. */
function isAddressInUse(error: unknown): boolean {
  for (let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === 'EADDRINUSE' || (typeof e.message === 'string' && /address already in use|EADDRINUSE/i.test(e.message))) return true;
  }
  return false;
}

/**
 * Listens, or rejects with one line naming the variable to change: `PORT 3000 on 0.0.0.0 is already
 * in use (EADDRINUSE)`.
 */
function listen(name: string, app: App, host: string, port: number): Promise<void> {
  const variables = name === 'internal' ? 'INTERNAL_PORT/INTERNAL_HOST' : 'PORT/HOST';
  return new Promise((resolve, reject) => {
    const { http } = config;
    const serverOptions = {
      // Node's defaults drop slow headers only after ~60-90 s and keep a slowly sent body for 300 s.
      headersTimeout: http.headersTimeoutMs,
      requestTimeout: http.requestTimeoutMs,
      keepAliveTimeout: http.keepAliveTimeoutMs,
      // Both timeouts are enforced only when Node checks the connections (every 30 s by default).
      connectionsCheckingInterval: http.connectionsCheckingIntervalMs,
    };
    const server = serve({ fetch: closingWhenShuttingDown(app), port, hostname: host, serverOptions }, (info) => {
      const url = browsableUrl(info.address, info.port);
      // A URL a terminal makes clickable, and where the docs are (served on the public listener).
      const docs = name === 'internal' ? undefined : `${url}/docs`;
      logger.info({ listener: name, host: info.address, port: info.port, url, ...(docs ? { docs } : {}) }, docs ? `listening on ${url} (docs: ${docs})` : `listening on ${url}`);
      resolve();
    }) as Server;
    server.once('error', (error: NodeJS.ErrnoException) => {
      const what = error.code === 'EADDRINUSE' ? 'is already in use' : error.code === 'EACCES' ? 'may not be opened by this user' : 'cannot be listened on';
      const variable = variables.split('/')[0];
      reject(Object.assign(new Error(`${variable} ${port} on ${host} ${what} (${error.code}): choose another with ${variables}`, { cause: error }), { code: error.code }));
    });
    servers.push(server);
  });
}

try {
  if (config.internalListener) {
    // The relay API only on the private listener; the public one answers 404 for /internal/*.
    await listen('public', composition.app('public'), config.host, config.port);
    await listen('internal', composition.app('internal'), config.internalListener.host, config.internalListener.port);
  } else {
    await listen('main', composition.app(), config.host, config.port);
  }
} catch (error) {
  const { code } = error as NodeJS.ErrnoException;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') logger.fatal((error as Error).message);
  else logger.fatal({ err: error }, 'could not listen');
  composition.release();
  await composition.stop();
  await logOutput?.close(1000);
  process.exit(1);
}

let drainingForExit = false;

/**
 * The first SIGTERM/SIGINT drains: /readyz answers 503, new routers are refused (DRAINING), the open
 * rooms go on until their last router closes or DRAIN_TIMEOUT_S passes; then the shutdown below closes
 * what is left (router.closed `shutdown`). A second signal during the drain shuts down at once.
 */
async function drainThenShutdown(signal: NodeJS.Signals) {
  if (drainingForExit || config.drainTimeoutS === 0) return shutdown(signal);
  drainingForExit = true;
  const { routers } = media.drain();
  logger.info({ signal, routers, drainTimeoutS: config.drainTimeoutS }, 'draining before shutdown');
  const emptied = await media.whenNoRouters(config.drainTimeoutS * 1000);
  if (!emptied && !shuttingDown) {
    const closed = await composition.relay!.closeRooms();
    logger.warn({ routers: closed }, 'drain timeout passed; closed the rooms left');
    // The event streams are still open: let them carry the router.closed `shutdown` events before
    // the shutdown ends them.
    await new Promise((resolve) => setTimeout(resolve, DRAIN_EVENTS_GRACE_MS));
  }
  return shutdown(signal);
}

async function shutdown(signal: NodeJS.Signals) {
  if (shuttingDown) return;
  shuttingDown = true;
  const startedShutdown = Date.now();
  logger.info({ signal }, 'shutting down');
  const deadline = setTimeout(() => {
    logger.error('shutdown deadline passed; exiting');
    // No flush to wait for now: the line is on its way if stdout takes it, dropped otherwise.
    logOutput?.abandon();
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS);
  deadline.unref();

  // What would hold server.close() until the forced close ends first (the event streams), and the
  // modules begin what takes time beside the connections' close (the recordings' stop).
  composition.release();
  // Stop accepting; in-flight requests finish (answered with Connection: close); idle keep-alive
  // sockets go now, and any still busy after 3 s are cut.
  const closed = servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
  for (const server of servers) server.closeIdleConnections();
  const force = setTimeout(() => {
    logger.warn('shutdown: connections still busy after 3 s are closed');
    for (const server of servers) server.closeAllConnections();
  }, SHUTDOWN_DEADLINE_MS - 1000);
  force.unref();
  await Promise.all(closed);
  clearTimeout(force);

  // The modules' stop: the relay's waits for its recordings, closes the media, which publishes the
  // shutdown events (router.closed `shutdown`, ...), and gives the webhook what time is left.
  await composition.stop({ deadlineMs: Math.max(0, SHUTDOWN_DEADLINE_MS - 500 - (Date.now() - startedShutdown)) });
  logger.info('shutdown complete');
  // The last lines get what is left of the deadline to reach stdout; a reader that is gone or does
  // not read costs them, not the exit.
  await logOutput?.close(SHUTDOWN_DEADLINE_MS - 250 - (Date.now() - startedShutdown));
  clearTimeout(deadline);
  process.exit(0);
}

function onSignal(signal: NodeJS.Signals) {
  // First, in this same run: a terminal's Ctrl-C has reached the media workers as well, and their exit
  // must read as part of this stop, not as a crash to restart.
  media.beginShutdown();
  void drainThenShutdown(signal);
}

process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);
