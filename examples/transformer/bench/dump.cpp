// bench/dump.cpp: runs the dumped training step and writes the .npy files and
// their manifest.
#include "bench/dump.hpp"

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/json_writer.hpp>
#include <gpuprof/scope.hpp>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "bench/npy.hpp"
#include "model/backend.hpp"

namespace transformer::bench {
namespace {

struct DumpedFile {
  std::string path;  // relative to the dump directory
  NpyShape shape;
  const char* dtype;
  std::string meaning;
};

class DumpWriter {
 public:
  explicit DumpWriter(std::string directory) : directory_(std::move(directory)) {}

  template <typename T>
  void write(const std::string& path, const std::vector<T>& values, const NpyShape& shape, const char* dtype,
             std::string meaning) {
    const std::filesystem::path full = std::filesystem::path(directory_) / path;
    std::filesystem::create_directories(full.parent_path());
    gpuprof::write_file_atomically(full.string(), npy_encode(values, shape));
    files_.push_back({path, shape, dtype, std::move(meaning)});
  }

  // One file per tensor of the flat ParameterLayout buffer `flat`.
  void write_tensors(const std::string& folder, const ParameterLayout& layout, const std::vector<float>& flat,
                     const std::string& meaning) {
    for (const ParamTensor& tensor : layout.tensors) {
      const auto begin = flat.begin() + static_cast<std::ptrdiff_t>(tensor.offset);
      const std::vector<float> values(begin, begin + static_cast<std::ptrdiff_t>(tensor.size()));
      write(folder + "/" + tensor.name + ".npy", values, tensor_shape(tensor), "float32",
            meaning + " " + tensor.name);
    }
  }

  const std::vector<DumpedFile>& files() const { return files_; }
  const std::string& directory() const { return directory_; }

 private:
  // Gains are vectors [d]; every other tensor is a matrix [rows, cols].
  static NpyShape tensor_shape(const ParamTensor& tensor) {
    if (tensor.kind == ParamKind::norm_gain) return {static_cast<std::size_t>(tensor.cols)};
    return {static_cast<std::size_t>(tensor.rows), static_cast<std::size_t>(tensor.cols)};
  }

  std::string directory_;
  std::vector<DumpedFile> files_;
};

// The decimal a float was written as (1e-05, not 9.99999974737875e-06), so the
// manifest shows the hyper-parameters as they were set.
double as_written(float value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::strtod(std::string(text, result.ptr).c_str(), nullptr);
}

void write_manifest(const DumpWriter& writer, const RunConfig& config, const std::string& backend, bool graph,
                    float loss) {
  const ModelConfig& model = config.model;
  gpuprof::JsonWriter json;
  json.begin_object()
      .member("schema", "gpuprof.transformer_dump")
      .member("version", 1)
      .member("backend", backend)
      .member("cuda_graph", graph)
      .member("loss", as_written(loss));
  json.key("config")
      .begin_object()
      .member("size", model.name)
      .member("vocab", model.vocab)
      .member("d_model", model.d_model)
      .member("d_ff", model.d_ff)
      .member("layers", model.layers)
      .member("heads", model.heads)
      .member("d_head", model.d_head())
      .member("rope_theta", as_written(model.rope_theta))
      .member("norm_eps", as_written(model.norm_eps))
      .member("batch", config.batch)
      .member("ctx", config.ctx)
      .member("precision", to_string(config.precision))
      .member("attention", to_string(config.attention))
      .member("seed", config.seed)
      .member("parameters", parameter_count(model))
      .end_object();
  const AdamWConfig& adamw = config.adamw;
  json.key("adamw")
      .begin_object()
      .member("lr", as_written(adamw.lr))
      .member("beta1", as_written(adamw.beta1))
      .member("beta2", as_written(adamw.beta2))
      .member("eps", as_written(adamw.eps))
      .member("weight_decay", as_written(adamw.weight_decay))
      .member("clip_norm", as_written(adamw.clip_norm))
      .member("step", 1)
      .member("decay", "applied after the Adam update: theta -= lr*wd*theta")
      .end_object();
  json.key("files").begin_array();
  for (const DumpedFile& file : writer.files()) {
    json.begin_object(gpuprof::JsonWriter::one_line).member("file", file.path).member("dtype", file.dtype);
    json.key("shape").begin_array();
    for (const std::size_t extent : file.shape) json.value(extent);
    json.end_array().member("meaning", file.meaning).end_object();
  }
  json.end_array().end_object();
  gpuprof::write_file_atomically((std::filesystem::path(writer.directory()) / "manifest.json").string(),
                                 json.str() + "\n");
}

}  // namespace

void write_training_step_dump(const std::string& directory, const harness::Device& device, RunConfig config,
                              const harness::TokenBatch& batch, bool graph) {
  config.mode = Mode::step;
  const ParameterLayout layout(config.model);
  const auto backend = device.make_backend(config);
  // Keeps the backend's own scopes out of the sweep's roots in the profile.
  GPUPROF_SCOPE("dump", backend->stream());
  backend->set_batch(batch.tokens, batch.targets);
  const std::vector<float> parameters_before = backend->parameters();

  // Each phase eagerly, or as a replay of its captured graph.
  const auto run = [&](const std::function<void()>& phases) {
    if (!graph) return phases();
    backend->capture_graph(phases);
    backend->replay_graph();
  };
  run([&] { backend->forward(); });
  const float loss = backend->loss();
  const std::vector<float> logits = backend->logits();
  run([&] {
    backend->backward();
    backend->optimizer_step();
  });
  const std::vector<float> gradients = backend->gradients();
  const std::vector<float> parameters_after = backend->parameters();

  const auto batch_rows = static_cast<std::size_t>(config.batch);
  const auto ctx = static_cast<std::size_t>(config.ctx);
  const auto vocab = static_cast<std::size_t>(config.model.vocab);
  DumpWriter writer(directory);
  writer.write("tokens.npy", batch.tokens, {batch_rows, ctx}, "int32", "input token ids [batch, ctx]");
  writer.write("targets.npy", batch.targets, {batch_rows, ctx}, "int32", "target token ids [batch, ctx]");
  writer.write_tensors("params", layout, parameters_before, "parameter before the step:");
  writer.write("loss.npy", std::vector<float>{loss}, {}, "float32", "mean cross-entropy of the forward pass");
  writer.write("logits.npy", logits, {batch_rows, ctx, vocab}, "float32", "logits [batch, ctx, vocab]");
  writer.write_tensors("grads", layout, gradients, "gradient of the loss w.r.t.");
  writer.write_tensors("params_after", layout, parameters_after, "parameter after one AdamW step:");
  write_manifest(writer, config, backend->name(), graph, loss);
}

}  // namespace transformer::bench
