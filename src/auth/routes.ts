import { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../app.js';

export function createAuthApp(_deps: AppDeps) {
  return new Hono<AppEnv>();
}
