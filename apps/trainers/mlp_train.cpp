// mlp_train: an MLP classifier on MNIST-format IDX data (784 -> hidden ReLU
// layers -> 10, log_softmax + NLL loss, SGD). fgtool's demo workload: each
// phase of a step is its own named, non-inlined function so flamegraphs show
// main -> train_epoch -> train_step -> {forward, backward, optimizer_step}
// beside MNISTIter::next -> MNISTIter::decode_batch.
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "diagnostics/input_error.h"
#include "mnist_iter.h"
#include "trainer_options.h"
#include "trainer_runtime.h"

namespace po = boost::program_options;

namespace fg::trainers {
namespace {

class MLPImpl : public torch::nn::Module {
 public:
  MLPImpl(int64_t inputs, const std::vector<int64_t>& hidden, int64_t classes) {
    int64_t width = inputs;
    for (int64_t h : hidden) {
      layers_->push_back(torch::nn::Linear(width, h));
      width = h;
    }
    layers_->push_back(torch::nn::Linear(width, classes));
    register_module("layers", layers_);
  }

  // Log-probabilities [n, classes].
  TRAINER_FRAME torch::Tensor forward(torch::Tensor x) {
    const size_t n = layers_->size();
    for (size_t i = 0; i < n; ++i) {
      x = layers_[i]->as<torch::nn::Linear>()->forward(x);
      if (i + 1 < n) x = torch::relu(x);
    }
    return torch::log_softmax(x, /*dim=*/1);
  }

 private:
  torch::nn::ModuleList layers_;
};
TORCH_MODULE(MLP);

TRAINER_FRAME torch::Tensor forward(MLP& model, const Batch& batch) {
  RECORD_USER_SCOPE("forward");
  return torch::nll_loss(model->forward(batch.images), batch.labels);
}

TRAINER_FRAME void backward(torch::Tensor& loss) {
  RECORD_USER_SCOPE("backward");
  loss.backward();
}

TRAINER_FRAME void optimizer_step(torch::optim::SGD& optimizer) {
  RECORD_USER_SCOPE("optimizer_step");
  optimizer.step();
}

// One SGD step; returns the batch's mean loss.
TRAINER_FRAME float train_step(MLP& model, torch::optim::SGD& optimizer, const Batch& batch) {
  RECORD_USER_SCOPE("train_step");
  optimizer.zero_grad();
  torch::Tensor loss = forward(model, batch);
  backward(loss);
  optimizer_step(optimizer);
  return loss.item<float>();
}

struct Evaluation {
  double loss = 0, accuracy = 0;
};

TRAINER_FRAME Evaluation evaluate(MLP& model, MNISTIter& data, const c10::Device& device) {
  torch::NoGradGuard no_grad;
  model->eval();
  double loss_sum = 0;
  int64_t correct = 0, seen = 0;
  Batch batch;
  for (data.reset(); data.next(batch);) {
    torch::Tensor x = batch.images.to(device), y = batch.labels.to(device);
    torch::Tensor logp = model->forward(x);
    loss_sum += torch::nll_loss(logp, y, {}, at::Reduction::Sum).item<double>();
    correct += logp.argmax(1).eq(y).sum().item<int64_t>();
    seen += batch.size;
  }
  model->train();
  return {loss_sum / double(seen), double(correct) / double(seen)};
}

struct EpochResult {
  double mean_loss = 0;
  int64_t samples = 0;
};

TRAINER_FRAME EpochResult train_epoch(MLP& model, torch::optim::SGD& optimizer, MNISTIter& data,
                                      const TrainerOptions& opts, const c10::Device& device, ProfilerTrace& trace) {
  EpochResult r;
  double loss_sum = 0;
  int64_t steps = 0;
  Batch batch;
  for (data.reset(); data.next(batch);) {
    if (device.is_cuda()) {
      batch.images = batch.images.to(device);
      batch.labels = batch.labels.to(device);
    }
    trace.before_step();
    loss_sum += double(train_step(model, optimizer, batch)) * double(batch.size);
    trace.after_step();
    r.samples += batch.size;
    if (++steps == opts.max_batches) break;
  }
  r.mean_loss = loss_sum / double(r.samples);
  return r;
}

std::string join_sizes(int64_t inputs, const std::vector<int64_t>& hidden, int64_t classes) {
  std::ostringstream s;
  s << inputs;
  for (int64_t h : hidden) s << '-' << h;
  s << '-' << classes;
  return s.str();
}

int mlp_main(int argc, char** argv) {
  TrainerOptions opts;
  opts.lr = 0.01;
  opts.epochs = 3;  // ~10 s on one core (OpenBLAS) with the 60000 images of MNIST or mnist_synth
  std::string hidden_text = "256,128";
  double momentum = 0.9;
  po::options_description model("Model options");
  model.add_options()
      ("hidden", po::value(&hidden_text)->default_value(hidden_text), "hidden layer widths, comma-separated")
      ("momentum", po::value(&momentum)->default_value(momentum), "SGD momentum (0 = plain SGD)");
  if (!parse_trainer_options(argc, argv, "mlp_train",
                             "Trains an MLP classifier (ReLU hidden layers, log_softmax, NLL loss, SGD) on MNIST IDX files\n"
                             "and prints per epoch: train loss, test loss and accuracy, samples/s.",
                             "  mnist_synth --out /tmp/mnist && mlp_train --data /tmp/mnist --epochs 1\n"
                             "  mlp_train --data /tmp/mnist --hidden 512,256 --threads 2 --max-batches 50\n"
                             "  fgtool record -o mlp.data -- mlp_train --data /tmp/mnist --epochs 1\n"
                             "  mlp_train --data /tmp/mnist --max-batches 20 --trace mlp-trace.json\n",
                             model, opts))
    return 0;
  std::vector<int64_t> hidden = parse_layer_sizes(hidden_text, "--hidden");
  if (momentum < 0 || momentum >= 1) throw UsageError("--momentum must be in [0, 1)");
  c10::Device device = select_device(opts.device);
  int threads = configure_threads(opts);
  torch::manual_seed(opts.seed);

  MnistSplit train = load_mnist_split(opts.data, "train");
  MnistSplit test = load_mnist_split(opts.data, "t10k");
  MNISTIter train_iter(train, opts.batch_size, /*shuffle=*/true, opts.seed, PixelScaling::standardize);
  MNISTIter test_iter(test, 1000, /*shuffle=*/false, opts.seed, PixelScaling::standardize);
  if (test_iter.input_size() != train_iter.input_size())
    throw InputError(test.images.path + ": images are " + std::to_string(test.images.rows) + "x" +
                     std::to_string(test.images.cols) + " but the training images are " +
                     std::to_string(train.images.rows) + "x" + std::to_string(train.images.cols));

  const int64_t classes = 10;
  MLP net(train_iter.input_size(), hidden, classes);
  net->to(device);
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(opts.lr).momentum(momentum));
  std::printf("mlp_train: %zu train / %zu test images (%ux%u) from %s; model %s; batch %lld, lr %g, momentum %g; %d threads on %s\n",
              train.size(), test.size(), train.images.rows, train.images.cols, opts.data.c_str(),
              join_sizes(train_iter.input_size(), hidden, classes).c_str(), (long long)opts.batch_size, opts.lr, momentum,
              threads, opts.device.c_str());
  Evaluation initial = evaluate(net, test_iter, device);
  std::printf("initial: val_loss %.4f val_acc %.4f\n", initial.loss, initial.accuracy);
  std::fflush(stdout);

  ProfilerTrace trace(opts.trace, /*warmup_steps=*/1, opts.trace_steps);
  Stopwatch total;
  for (int epoch = 1; epoch <= opts.epochs; ++epoch) {
    Stopwatch clock;
    EpochResult r = train_epoch(net, optimizer, train_iter, opts, device, trace);
    double seconds = clock.seconds();
    Evaluation ev = evaluate(net, test_iter, device);
    std::printf("epoch %d/%d: train_loss %.4f val_loss %.4f val_acc %.4f samples %lld samples/s %.0f time %.2fs\n", epoch, opts.epochs,
                r.mean_loss, ev.loss, ev.accuracy, (long long)r.samples, double(r.samples) / seconds, seconds);
    std::fflush(stdout);
  }
  trace.finish();
  std::printf("done: %.2fs\n", total.seconds());
  return 0;
}

}  // namespace
}  // namespace fg::trainers

int main(int argc, char** argv) {
  return fg::trainers::run_trainer("mlp_train", [&] { return fg::trainers::mlp_main(argc, argv); });
}
