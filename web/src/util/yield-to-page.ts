/** What Chromium (129+) and Firefox (142+) offer: yield, then continue ahead of other queued work. */
type YieldingScheduler = { readonly yield?: () => Promise<void> };

/**
 * Lets the page render and handle input before a long piece of work goes on (applying a long
 * journal): `scheduler.yield()` where the browser has it, else a message to itself, which unlike
 * a nested `setTimeout(0)` is not clamped to 4 ms.
 */
export function yieldToPage(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: YieldingScheduler }).scheduler;
  if (scheduler?.yield) return scheduler.yield();
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
