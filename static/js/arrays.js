// Numbers from the API: Plotly-style typed arrays {dtype, bdata (base64), shape} — dtype
// "f4" (float32), or "f8" (float64) when a value does not fit a float32 — or plain
// nested lists, decoded to one flat typed array plus its shape (row-major).

const DTYPES = { f4: Float32Array, f8: Float64Array, i4: Int32Array, i2: Int16Array,
  i1: Int8Array, u4: Uint32Array, u2: Uint16Array, u1: Uint8Array };

function base64Bytes(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

function shapeOf(shape) {
  if (Array.isArray(shape)) return shape.map(Number);
  if (typeof shape === 'string') return shape.split(',').map((s) => Number(s.trim()));
  if (typeof shape === 'number') return [shape];
  return null;
}

function flatten(value, out) {
  if (Array.isArray(value)) {
    for (const v of value) flatten(v, out);
  } else {
    out.push(value === null || value === undefined ? NaN : Number(value));
  }
}

function nestedShape(value) {
  const shape = [];
  let v = value;
  while (Array.isArray(v)) {
    shape.push(v.length);
    v = v[0];
  }
  return shape;
}

/** {data: TypedArray, shape: number[]} from a typed-array object or nested lists. */
export function decode(value) {
  if (value && typeof value === 'object' && !Array.isArray(value) && 'bdata' in value) {
    const Kind = DTYPES[value.dtype];
    if (!Kind) throw new Error(`unsupported dtype ${value.dtype}`);
    const bytes = base64Bytes(value.bdata);
    const data = new Kind(bytes.buffer, 0, bytes.byteLength / Kind.BYTES_PER_ELEMENT);
    return { data, shape: shapeOf(value.shape) || [data.length] };
  }
  const flat = [];
  flatten(value, flat);
  return { data: Float64Array.from(flat), shape: nestedShape(value) };
}

/**
 * One 2-D slice for drawing: the block of a [head, rows, cols] tensor for `head`,
 * a [rows, cols] tensor itself, or a 1-D tensor as one row. Rows are views (no copy).
 */
export function slice2d(tensor, head) {
  const { data, shape } = tensor;
  let rows = 1;
  let cols = shape[shape.length - 1] || 1;
  let offset = 0;
  if (shape.length === 3) {
    [, rows, cols] = shape;
    offset = Math.min(head, shape[0] - 1) * rows * cols;
  } else if (shape.length === 2) {
    [rows, cols] = shape;
  }
  const rowViews = [];
  for (let i = 0; i < rows; i += 1) {
    rowViews.push(data.subarray(offset + i * cols, offset + (i + 1) * cols));
  }
  return { rows, cols, rowViews, get: (i, j) => data[offset + i * cols + j] };
}

/**
 * The largest finite number in `values` (an array or typed array, or rows of them), and at
 * least 0: the top of a colour scale that starts at 0 (NaN and ±∞ are left out).
 */
export function maxOf(values) {
  let max = 0;
  for (const v of values) {
    const x = typeof v === 'number' ? v : maxOf(v);
    if (Number.isFinite(x) && x > max) max = x;
  }
  return max;
}

/**
 * A value to read on screen: 9 significant digits (exactly a float32's precision; an f8 value
 * is rounded — the CSV and JSON exports carry the API's exact float64 numbers).
 */
export function exact(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  return String(Number(v.toPrecision(9)));
}

/** A short, readable number: 6 significant digits, −∞ for minus infinity. */
export function short(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (v !== 0 && (Math.abs(v) >= 1e6 || Math.abs(v) < 1e-4)) return v.toExponential(4);
  return String(Number(v.toPrecision(6)));
}
