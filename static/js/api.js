// The only module that calls fetch: every request the page makes goes through here.
// Errors come back as ApiError with one {field, msg} per problem, field like "weights.W_q".

export const API_ROOT = '/api/v1';

export class ApiError extends Error {
  constructor(status, errors) {
    super(errors.map((e) => e.msg).join('\n') || `HTTP ${status}`);
    this.status = status;
    this.errors = errors;
  }
}

/** FastAPI's {"detail": [...]} (or a plain string detail) as [{field, msg}]. */
function errorsOf(status, body) {
  const detail = body && body.detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => ({
      field: (d.loc || []).filter((p) => p !== 'body' && p !== 'query').join('.'),
      msg: String(d.msg || ''),
    }));
  }
  if (typeof detail === 'string') return [{ field: '', msg: detail }];
  if (status === 413) return [{ field: '', msg: 'The request is larger than the server accepts.' }];
  return [{ field: '', msg: `The server answered HTTP ${status}.` }];
}

async function call(method, path, body, signal) {
  const init = { method, headers: { Accept: 'application/json' }, signal };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(API_ROOT + path, init);
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, errorsOf(response.status, data));
  return data;
}

export const getMechanisms = () => call('GET', '/mechanisms');
export const getPresets = () => call('GET', '/presets');
export const runAttention = (request, signal) =>
  call('POST', '/attention?encoding=typed', request, signal);
export const createShare = (request) => call('POST', '/shares', { request });
export const getShare = (id) => call('GET', `/shares/${encodeURIComponent(id)}?encoding=typed`);
/** The same as runAttention in plain float64 lists: the exact numbers, for exports. */
export const runAttentionPlain = (request, signal) => call('POST', '/attention', request, signal);
/** A share in plain float64 lists: its exact numbers and weights (exports, "edit a copy"). */
export const getSharePlain = (id) => call('GET', `/shares/${encodeURIComponent(id)}`);
export const getSqrtDkExperiment = () => call('GET', '/experiments/sqrt-dk');

/** The absolute URL of an API path on this server, for "copy as curl". */
export function apiUrl(path) {
  return new URL(API_ROOT + path, window.location.origin).href;
}

/** The absolute URL of share `id` as JSON (GET /api/v1/shares/{id}): a share page's JSON twin. */
export const shareJsonUrl = (id) => apiUrl(`/shares/${encodeURIComponent(id)}`);

// --- real pretrained models (added by the model page; app/api/models.py) -----------------

export const getModels = () => call('GET', '/models');
/** Per layer × head statistics, ≤ 64 × 64 thumbnails and the rollout, typed arrays. */
export const modelOverview = (modelId, body, signal) =>
  call('POST', `/models/${encodeURIComponent(modelId)}/overview?encoding=typed`, body, signal);
/** α of one head (body {text, layer, head, truncate, steps}) and, with steps, its trace. */
export const modelAttention = (modelId, body, signal) =>
  call('POST', `/models/${encodeURIComponent(modelId)}/attention?encoding=typed`, body, signal);
/** Share a real-model view: kind "model_attention" ({model, text, layer, head, truncate,
 * steps}) or "model_overview" ({model, text, truncate}); 201 {id, url}. */
export const createModelShare = (kind, request) => call('POST', '/shares', { kind, request });
