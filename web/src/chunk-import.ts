/**
 * A lazily loaded chunk's import that can be tried again. Some browsers (Debian's Chromium 150 among them) keep a
 * failed dynamic import for its address, so importing it again fails at once without asking Berth. The failure names
 * the address; after one, the chunk is asked for under that address with a query, which makes it a module of its own.
 */
export function retriableImport<T>(load: () => Promise<T>): () => Promise<T> {
  let failures = 0;
  return () => {
    const attempt = failures;
    return load()
      .catch((error: unknown) => {
        const address = /https?:\/\/[^\s'"]+?\.js\b/.exec(String(error))?.[0];
        if (attempt === 0 || address === undefined) throw error;
        return import(/* @vite-ignore */ `${address}?attempt=${attempt}`) as Promise<T>;
      })
      .catch((error: unknown) => {
        failures++;
        throw error;
      });
  };
}
