/**
 * Database locations as they may be shown: in logs, errors and the statistics. Neutral ground, so
 * the HTTP layer and the CLI can print a location without importing a concrete backend.
 */

/** postgres://user:secret@host/db → postgres://user:***@host/db; anything that is no URL with a password is returned as it is. */
export function redactPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const key of ['password', 'sslpassword']) if (parsed.searchParams.has(key)) parsed.searchParams.set(key, '***');
    return parsed.toString();
  } catch {
    return url.replace(/:\/\/([^:/@]*):[^@]*@/, '://$1:***@');
  }
}
