// Operators: look users up, ban, clear second factors (the internal surface).
import type { AccountFeature } from '../feature.js';
import { moderationRoutes } from './routes.js';

export const moderationFeature: AccountFeature = { mounts: ({ services, now }) => [{ prefix: '/internal', surface: 'internal', routes: moderationRoutes(services.moderation, now) }] };
