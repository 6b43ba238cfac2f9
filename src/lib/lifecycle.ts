/**
 * Parts with a life of their own: timers, writers, the queue rebuild. Started in order, stopped in
 * reverse (src/wiring/lifecycle.ts declares the list). A leaf module so that services can offer a Lifecycle
 * without importing the container that lists them.
 */
export interface Lifecycle {
  name: string;
  /**
   * Starts what may run alongside the earlier parts' start (a Worker loading its code on another
   * core while the queue is rebuilt). Every part's startEarly runs before the first start; start()
   * still runs in order and finishes it. A part started early is stopped even if its start never ran.
   */
  startEarly?(): void;
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}
