// The HTTP API of basin serve (docs/server.md "HTTP API"), called with the signed-in user's
// bearer token. The token is kept in sessionStorage: it lasts as long as the browser tab.

const TOKEN_KEY = 'basin.token';

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function signIn(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
}

// What the API answered instead of a result: {"error": {"code", "sqlstate", "message"}} with
// its HTTP status, or a request that did not reach the server (httpStatus 0).
export class ApiError extends Error {
  constructor(httpStatus, code, sqlstate, message) {
    super(message);
    this.httpStatus = httpStatus;
    this.code = code;
    this.sqlstate = sqlstate;
  }
}

// Sent when the stored token is refused (401): app.js then shows the sign-in page.
export const UNAUTHENTICATED_EVENT = 'basin:unauthenticated';

// Calls `path` of the server ("/api/v1/schemas") and resolves to its JSON answer (its text
// with `text: true`, for GET /metrics); rejects with an ApiError. `token` defaults to the
// stored one; `body` is sent as JSON.
export async function call(path, {method = 'GET', body, token = storedToken(), text = false} = {}) {
  const headers = {Authorization: `Bearer ${token}`};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  } catch (failure) {
    throw new ApiError(0, 'NetworkError', '', `the server cannot be reached (${failure.message})`);
  }
  if (response.ok && text) return response.text();
  const answer = await response.json().catch(() => null);
  if (response.ok) return answer;
  const error = (answer && answer.error) || {};
  const refused = new ApiError(response.status, error.code || `HTTP ${response.status}`, error.sqlstate || '',
                               error.message || response.statusText);
  if (response.status === 401 && token === storedToken()) {
    signOut();
    window.dispatchEvent(new CustomEvent(UNAUTHENTICATED_EVENT, {detail: refused}));
  }
  throw refused;
}

// `name` as one path segment of a URL.
export function segment(name) {
  return encodeURIComponent(name);
}
