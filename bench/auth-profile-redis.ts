// auth-profile with its rate limits counted in Redis (issue 15): BENCH_REDIS_URL, by default the machine's Redis, database 14.
import { authProfile } from './auth-profile.js';

await authProfile({ redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14' });
