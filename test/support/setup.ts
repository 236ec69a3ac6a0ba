// Quiet by default; LOG_LEVEL=debug bun test shows the server logs.
process.env.LOG_LEVEL ??= 'silent';
// One test process hosts many deployments: each idle one collecting the whole process's garbage (or dropping its compiled code) would slow the suite.
process.env.IDLE_COLLECT_MS ??= '0';
process.env.IDLE_SHRINK_MS ??= '0';
