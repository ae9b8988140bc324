// npm run env:example: rewrites .env.example from src/config (test/env-example.test.ts checks it).
import { writeFileSync } from 'node:fs';
import { renderEnvExample } from '../src/config/env-example.js';

writeFileSync(new URL('../.env.example', import.meta.url), renderEnvExample());
