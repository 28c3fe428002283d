/** The runtime's clock: the contract and the real clock live in src/api/clock.ts, re-exported for the runtime. */
export { type Clock, systemClock, type TimerHandle } from "../api/clock.ts";
