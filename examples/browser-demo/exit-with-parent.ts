// Preloaded into the demo's service process (`--import`): its stdin is a pipe from the process that
// started it, so end-of-file means that process is gone (even after SIGKILL). The service then
// shuts down as on Ctrl-C instead of staying behind with its ports bound.
process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.on('error', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.resume();
