/**
 * A tiny Whisper made by the tests themselves, in the real on-disk format transformers.js loads
 * (config and tokenizer JSON, `onnx/encoder_model.onnx`, `onnx/decoder_model_merged*.onnx`), so
 * the Whisper code path runs end to end without the real 150 MB model.
 *
 * Its weights are not random but hand-set, so the output is predictable: the decoder ignores the
 * audio and maps each token to a fixed successor, so every call yields
 * `<|0.00|> hello world <|1.00|> <|endoftext|>` — i.e. the text "hello world" from 0 to 1 s.
 * The ONNX files are written with a minimal protobuf encoder (no dependency).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// ---- protobuf wire format (only what onnx.proto needs here) ----
type Field = Uint8Array;

function varint(n: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}
const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) out.set(p, o), (o += p.length);
  return out;
};
const int = (field: number, n: number | bigint): Field => new Uint8Array([...varint(field << 3), ...varint(n)]);
const bytes = (field: number, b: Uint8Array): Field =>
  concat([new Uint8Array([...varint((field << 3) | 2), ...varint(b.length)]), b]);
const str = (field: number, s: string): Field => bytes(field, new TextEncoder().encode(s));
const msg = (field: number, ...parts: Field[]): Field => bytes(field, concat(parts));

// ---- onnx.proto ----
const FLOAT = 1;
const INT64 = 7;
const BOOL = 9;

type Dim = number | string;
function valueInfo(field: number, name: string, elemType: number, dims: Dim[]): Field {
  const shape = dims.map((d) => msg(1, typeof d === 'number' ? int(1, d) : str(2, d)));
  return msg(field, str(1, name), msg(2, msg(1, int(1, elemType), msg(2, ...shape))));
}
function tensor(
  field: number,
  name: string,
  type: typeof FLOAT | typeof INT64,
  dims: number[],
  values: number[],
): Field {
  const raw =
    type === FLOAT
      ? new Uint8Array(Float32Array.from(values).buffer)
      : new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer);
  return msg(field, ...dims.map((d) => int(1, d)), int(2, type), str(8, name), bytes(9, raw));
}
function node(op: string, inputs: string[], outputs: string[], attrs: Field[] = []): Field {
  return msg(
    1,
    ...inputs.map((i) => str(1, i)),
    ...outputs.map((o) => str(2, o)),
    str(3, `${op}_${outputs[0]}`),
    str(4, op),
    ...attrs,
  );
}
const attrInt = (name: string, v: number) => msg(5, str(1, name), int(20, 2), int(3, v));
const attrInts = (name: string, v: number[]) => msg(5, str(1, name), int(20, 7), ...v.map((x) => int(8, x)));

function model(nodes: Field[], initializers: Field[], inputs: Field[], outputs: Field[]): Uint8Array {
  const graph = msg(7, ...nodes, str(2, 'g'), ...initializers, ...inputs, ...outputs);
  return concat([int(1, 8), str(2, 'vidq-tests'), graph, msg(8, str(1, ''), int(2, 13))]);
}

// ---- the tiny Whisper ----
/** Token ids: text tokens first, then the specials, then the 1501 timestamps, as in Whisper. */
const TEXT = ['!', 'Ġhello', 'Ġworld'];
const EOT = TEXT.length; // <|endoftext|>
const SOT = EOT + 1; // <|startoftranscript|>
const NO_TS = EOT + 2; // <|notimestamps|>
const TS0 = EOT + 3; // <|0.00|>
const VOCAB = TS0 + 1501;
const ts = (sec: number) => TS0 + Math.round(sec / 0.02);

export const TINY_WHISPER_TEXT = 'hello world';
/** The tiny model's one segment always ends here, relative to the audio it is given. */
export const TINY_WHISPER_END_SEC = 1;

function encoderOnnx(): Uint8Array {
  // last_hidden_state [b, 1500, 1]: the first mel bin's first 1500 frames, transposed.
  return model(
    [
      node('Slice', ['input_features', 'starts', 'ends', 'axes'], ['sliced']),
      node('Transpose', ['sliced'], ['last_hidden_state'], [attrInts('perm', [0, 2, 1])]),
    ],
    [
      tensor(5, 'starts', INT64, [2], [0, 0]),
      tensor(5, 'ends', INT64, [2], [1, 1500]),
      tensor(5, 'axes', INT64, [2], [1, 2]),
    ],
    [valueInfo(11, 'input_features', FLOAT, ['batch_size', 80, 3000])],
    [valueInfo(12, 'last_hidden_state', FLOAT, ['batch_size', 1500, 1])],
  );
}

function decoderOnnx(): Uint8Array {
  const next = new Array<number>(VOCAB).fill(EOT);
  next[SOT] = ts(0);
  next[ts(0)] = 1;
  next[1] = 2;
  next[2] = ts(TINY_WHISPER_END_SEC);
  // One layer, one head, head size 1: the caches are [b, 1, len, 1]; the decoder's own grows by one per token.
  const pkv = ['decoder.key', 'decoder.value', 'encoder.key', 'encoder.value'];
  return model(
    [
      node('Gather', ['next', 'input_ids'], ['next_ids']),
      node('OneHot', ['next_ids', 'depth', 'onehot_values'], ['logits'], [attrInt('axis', -1)]),
      node('Cast', ['input_ids'], ['ids_f'], [attrInt('to', FLOAT)]),
      node('Mul', ['ids_f', 'zero'], ['zeros']),
      node('Unsqueeze', ['zeros', 'axes13'], ['new_kv']),
      node('Concat', ['past_key_values.0.decoder.key', 'new_kv'], ['present.0.decoder.key'], [attrInt('axis', 2)]),
      node('Concat', ['past_key_values.0.decoder.value', 'new_kv'], ['present.0.decoder.value'], [attrInt('axis', 2)]),
      node('Unsqueeze', ['encoder_hidden_states', 'axes1'], ['present.0.encoder.key']),
      node('Identity', ['present.0.encoder.key'], ['present.0.encoder.value']),
    ],
    [
      tensor(5, 'next', INT64, [VOCAB], next),
      tensor(5, 'depth', INT64, [1], [VOCAB]),
      tensor(5, 'onehot_values', FLOAT, [2], [0, 20]),
      tensor(5, 'zero', FLOAT, [], [0]),
      tensor(5, 'axes13', INT64, [2], [1, 3]),
      tensor(5, 'axes1', INT64, [1], [1]),
    ],
    [
      valueInfo(11, 'input_ids', INT64, ['batch_size', 'decoder_sequence_length']),
      valueInfo(11, 'encoder_hidden_states', FLOAT, ['batch_size', 'encoder_sequence_length', 1]),
      ...pkv.map((n) =>
        valueInfo(11, `past_key_values.0.${n}`, FLOAT, [
          'batch_size',
          1,
          n.startsWith('decoder') ? 'past_decoder_sequence_length' : 'encoder_sequence_length_out',
          1,
        ]),
      ),
      valueInfo(11, 'use_cache_branch', BOOL, [1]),
    ],
    [
      valueInfo(12, 'logits', FLOAT, ['batch_size', 'decoder_sequence_length', VOCAB]),
      ...pkv.map((n) =>
        valueInfo(12, `present.0.${n}`, FLOAT, [
          'batch_size',
          1,
          n.startsWith('decoder') ? 'total_sequence_length' : 'encoder_sequence_length_out',
          1,
        ]),
      ),
    ],
  );
}

function tokenizerJson() {
  const special = (id: number, content: string, isSpecial = true) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: isSpecial,
  });
  const added = [
    special(EOT, '<|endoftext|>'),
    special(SOT, '<|startoftranscript|>'),
    special(NO_TS, '<|notimestamps|>'),
  ];
  // Timestamps are ordinary added tokens in Whisper's tokenizer, not special ones.
  for (let i = 0; i <= 1500; i++) added.push(special(TS0 + i, `<|${(i * 0.02).toFixed(2)}|>`, false));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab: Object.fromEntries(TEXT.map((t, i) => [t, i])),
      merges: [],
    },
  };
}

/**
 * Writes the tiny model to `<modelsDir>/<id>/`. `decoderSuffix` names the decoder file for the
 * dtype under test (`_quantized` for q8: the same graph, transformers.js only picks the name).
 */
export function writeTinyWhisper(modelsDir: string, id: string, decoderSuffix = '_quantized'): string {
  const dir = join(modelsDir, id);
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  const json = (name: string, value: unknown) => writeFileSync(join(dir, name), JSON.stringify(value, null, 1));
  json('config.json', {
    model_type: 'whisper',
    architectures: ['WhisperForConditionalGeneration'],
    is_encoder_decoder: true,
    vocab_size: VOCAB,
    num_mel_bins: 80,
    d_model: 1,
    encoder_layers: 1,
    encoder_attention_heads: 1,
    decoder_layers: 1,
    decoder_attention_heads: 1,
    max_source_positions: 1500,
    max_target_positions: 448,
    bos_token_id: EOT,
    eos_token_id: EOT,
    pad_token_id: EOT,
    decoder_start_token_id: SOT,
  });
  json('generation_config.json', {
    decoder_start_token_id: SOT,
    bos_token_id: EOT,
    eos_token_id: EOT,
    pad_token_id: EOT,
    no_timestamps_token_id: NO_TS,
    is_multilingual: false,
    max_initial_timestamp_index: 50,
    max_length: 448,
    begin_suppress_tokens: [],
    suppress_tokens: [],
  });
  json('preprocessor_config.json', {
    feature_extractor_type: 'WhisperFeatureExtractor',
    feature_size: 80,
    sampling_rate: 16000,
    hop_length: 160,
    chunk_length: 30,
    n_fft: 400,
    n_samples: 480000,
    nb_max_frames: 3000,
    padding_side: 'right',
    padding_value: 0,
    return_attention_mask: false,
    processor_class: 'WhisperProcessor',
  });
  json('tokenizer.json', tokenizerJson());
  json('tokenizer_config.json', {
    tokenizer_class: 'WhisperTokenizer',
    bos_token: '<|endoftext|>',
    eos_token: '<|endoftext|>',
    unk_token: '<|endoftext|>',
    pad_token: '<|endoftext|>',
    model_max_length: 1024,
    clean_up_tokenization_spaces: true,
  });
  writeFileSync(join(dir, 'onnx', 'encoder_model.onnx'), encoderOnnx());
  writeFileSync(join(dir, 'onnx', `decoder_model_merged${decoderSuffix}.onnx`), decoderOnnx());
  return dir;
}
