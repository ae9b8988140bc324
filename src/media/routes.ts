import { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../app.js';

export function createInternalApp(_deps: AppDeps) {
  return new Hono<AppEnv>();
}
