// Quiet by default; LOG_LEVEL=debug bun test shows the server logs.
process.env.LOG_LEVEL ??= 'silent';
