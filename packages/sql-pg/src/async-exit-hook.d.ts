/** The part of `async-exit-hook` (no bundled types) that EmbeddedPostgres uses. */
declare module "async-exit-hook" {
  interface AsyncExitHook {
    (hook: (done?: () => void) => void): void
    /** Stops listening to a process event (`exit`, `beforeExit`, `SIGINT`, ...). */
    unhookEvent(event: string): void
    /** The process events currently listened to. */
    hookedEvents(): Array<string>
  }
  const hook: AsyncExitHook
  export default hook
}
