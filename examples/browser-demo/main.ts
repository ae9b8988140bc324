// `npm run demo`: the service and the signaling server on 127.0.0.1; Ctrl-C or SIGTERM stops both.
import { z } from 'zod';
import { DemoPortError, startDemo } from './start.js';

const port = (def: number) => z.coerce.number().int().min(0).max(65535).default(def);
const env = z
  .object({
    DEMO_PORT: port(8080),
    DEMO_SERVICE_PORT: port(3100),
    DEMO_RTC_PORT: port(40100).refine((p) => p > 0, 'must be a port number, not 0'),
    DEMO_DATABASE_URL: z.string().min(1).default('memory://'),
    DEMO_SERVICE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('warn'),
  })
  .safeParse(process.env);
if (!env.success) {
  console.error(env.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'));
  process.exit(1);
}

const demo = await startDemo({
  demoPort: env.data.DEMO_PORT,
  servicePort: env.data.DEMO_SERVICE_PORT,
  rtcPort: env.data.DEMO_RTC_PORT,
  // The worker's port and eight after it: a WHEP player's pipe transports (the WHEP page).
  rtcPortCount: 9,
  databaseUrl: env.data.DEMO_DATABASE_URL,
  serviceLogLevel: env.data.DEMO_SERVICE_LOG_LEVEL,
  serviceOutput: 'inherit',
}).catch((error: unknown) => {
  if (error instanceof DemoPortError) {
    const variable = { demoPort: 'DEMO_PORT', servicePort: 'DEMO_SERVICE_PORT', rtcPort: 'DEMO_RTC_PORT' }[error.option];
    const choice = error.option === 'rtcPort' ? 'another port (UDP and TCP)' : 'another port, or 0 for any free one';
    console.error(`${variable}: ${error.message}. Set ${variable} to ${choice}, e.g. ${variable}=${error.port + 1} npm run demo`);
  } else {
    console.error(error instanceof Error ? error.message : error);
  }
  process.exit(1);
});

console.log(`\nBrowser demo: open ${demo.url}\n  (passkeys: ${demo.passkeyUrl}; service ${demo.serviceUrl}, media on 127.0.0.1:${env.data.DEMO_RTC_PORT} UDP/TCP; Ctrl-C stops both)\n`);

let stopping = false;
async function stop(signal: NodeJS.Signals) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the demo and the service…`);
  await demo.close();
  process.exitCode = 0;
}
process.on('SIGINT', (s) => void stop(s));
process.on('SIGTERM', (s) => void stop(s));
