// The service's API as the console calls it: the credential from session storage as a bearer
// header on every call (never in a URL or a cookie), the error envelope as an ApiError, Server-Sent
// Events read through fetch (EventSource cannot send a header), WebSockets authenticated by
// subprotocol (a browser cannot set their headers either).

const CREDENTIAL = 'stasis.credential';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const credential = {
  get: () => sessionStorage.getItem(CREDENTIAL),
  set: (value) => sessionStorage.setItem(CREDENTIAL, value),
  clear: () => sessionStorage.removeItem(CREDENTIAL),
};

function headers(extra = {}) {
  return { Authorization: `Bearer ${credential.get()}`, ...extra };
}

async function failure(response) {
  let code = `http_${response.status}`;
  let message = response.statusText || code;
  try {
    const body = await response.json();
    if (body && body.error) ({ code, message } = body.error);
  } catch {
    // not the envelope: keep the status line
  }
  return new ApiError(response.status, code, message);
}

/** A JSON call; resolves to the parsed answer (null for 204), rejects with an ApiError. */
export async function call(method, path, body, signal) {
  const init = { method, headers: headers(), signal };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null;
  return response.json();
}

export const get = (path, signal) => call('GET', path, undefined, signal);
export const post = (path, body = {}) => call('POST', path, body);
export const put = (path, body) => call('PUT', path, body);
export const del = (path) => call('DELETE', path);

/** Raw bytes of a file, as text. */
export async function readText(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw await failure(response);
  return response.text();
}

/** Replaces a file's content. */
export async function writeText(path, text) {
  const response = await fetch(path, { method: 'PUT', headers: headers({ 'Content-Type': 'application/octet-stream' }), body: text });
  if (!response.ok) throw await failure(response);
  return response.json();
}

/**
 * Follows a Server-Sent Events stream until `signal` aborts it or the server ends it:
 * onEvent(name, data, id) for each event, data parsed as JSON. Resolves when the stream ends.
 */
export async function follow(path, onEvent, signal) {
  const response = await fetch(path, { headers: headers({ Accept: 'text/event-stream' }), signal });
  if (!response.ok) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = { name: 'message', data: [], id: null };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (line === '') {
          if (event.data.length) onEvent(event.name, JSON.parse(event.data.join('\n')), event.id);
          event = { name: 'message', data: [], id: null };
        } else if (line.startsWith('event:')) event.name = line.slice(6).trim();
        else if (line.startsWith('data:')) event.data.push(line.slice(5).replace(/^ /, ''));
        else if (line.startsWith('id:')) event.id = line.slice(3).trim();
      }
    }
  } catch (e) {
    if (e.name !== 'AbortError') throw e;
  }
}

/**
 * Follows a stream of events until `signal` aborts, opening it again a second after it ends or
 * fails (the service restarted, say); `afterGap`, if given, runs after each pause, to read again
 * what the gap may have missed. Returns at once.
 */
export function followAlways(path, onEvent, signal, afterGap = async () => {}) {
  (async () => {
    while (!signal.aborted) {
      try {
        await follow(path, onEvent, signal);
      } catch {
        // ended or failed: open it again below
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (!signal.aborted) await afterGap().catch(() => {});
    }
  })();
}

/** A WebSocket to `path` (with its query), its credential offered as the subprotocol after "stasis". */
export function socket(path) {
  const url = new URL(path, location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return new WebSocket(url, ['stasis', `bearer.${credential.get()}`]);
}

/** Who the credential is: {credentialId, kind, tenantId, root, scope?, permissions?}. */
export const whoami = () => get('/v1/whoami');
