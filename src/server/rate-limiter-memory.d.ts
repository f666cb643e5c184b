// Types for the one file of rate-limiter-flexible the proxy route imports: its memory limiter, on
// its own, so the route's module graph stays free of Node built-ins (the package's main entry
// also loads the cluster limiter, which requires `cluster` and `crypto`). The file is CommonJS
// and its module.exports is the class, which is what `export =` says.
declare module 'rate-limiter-flexible/lib/RateLimiterMemory.js' {
  import { RateLimiterMemory } from 'rate-limiter-flexible';

  export = RateLimiterMemory;
}
