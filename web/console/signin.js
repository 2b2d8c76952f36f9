// The sign-in page: the user pastes a token (basin_<id>_<secret>). It is checked with one
// call to the API before it is kept, so a wrong token is refused here, not on the next page.

import {ApiError, call, signIn} from './api.js';
import {el} from './dom.js';

// Why a token was refused, in words for the person holding it.
function refusal(error) {
  if (error instanceof ApiError && error.httpStatus === 401) {
    return `The server refused this token (401 ${error.code}): ${error.message}. ` +
           'Check that it is complete, and ask an administrator for a new one if it has expired or was revoked.';
  }
  return `The token could not be checked: ${error.message}`;
}

// Draws the page into `view`; `message` (optional) says why the user is here again.
export function renderSignIn(view, message) {
  const input = el('input', {id: 'token-input', type: 'password', autocomplete: 'off', spellcheck: 'false',
                             placeholder: 'basin_0123456789abcdef_...', required: true});
  const status = el('p', {id: 'signin-error', class: 'error', role: 'alert', hidden: !message}, message || '');
  const submit = el('button', {id: 'signin-button', type: 'submit'}, 'Sign in');
  const form = el('form', {id: 'signin', class: 'panel'},
    el('h1', {}, 'Sign in'),
    el('label', {for: 'token-input'}, 'Access token'),
    input, submit, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    submit.disabled = true;
    try {
      await call('/api/v1/schemas', {token});
      signIn(token);
      location.hash = '#/catalog';
    } catch (error) {
      status.textContent = refusal(error);
      status.hidden = false;
    } finally {
      submit.disabled = false;
    }
  });
  view.replaceChildren(form);
  input.focus();
}
