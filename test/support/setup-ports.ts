// Runs before every test file (vitest setupFiles, executed again per file even where the worker is
// reused): each file takes its RTC ports from the start of its worker's slice (test/support/ports.ts).
import { startPortTurnsOver } from './ports.js';

startPortTurnsOver();
