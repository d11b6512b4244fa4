/** What the `store` setting (config `store`, `berth serve --store`) accepts. */
export const STORE_FORM = 'expected "sqlite" or a postgres:// URL';

/** Whether `text` is a valid `store` setting: "sqlite", or a postgres:// (postgresql://) URL. */
export function isStoreSetting(text: string): boolean {
  return text === "sqlite" || isPostgresUrl(text);
}

/** Whether the store is a fleet's PostgreSQL database rather than the embedded SQLite file. */
export function isPostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\/.+/.test(text);
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, "$1:***@");
}

/** Whether the URL carries a password (`postgres://user:password@host/db`). */
export function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== "";
  } catch {
    return false;
  }
}
