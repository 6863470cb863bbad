#!/usr/bin/env node
import module from 'node:module';

// Node 22.8+ keeps V8's compiled code of the bundle on disk (NODE_COMPILE_CACHE, else the system's temp
// folder), so a command after the first skips most of compiling it; Node 20 has no such cache. The
// bundle is imported after, so that it is compiled with the cache on. It never throws: a cache that
// cannot be written only costs the compile.
module.enableCompileCache?.();
await import('../dist/bundle/main.js');
