// vae_train: a variational autoencoder on MNIST-format IDX data
// (784-400-20 encoder with mu/logvar heads, reparameterisation, 20-400-784
// sigmoid decoder, BCE(sum) + KL loss, Adam), after the PyTorch VAE example.
// Named, non-inlined phases: train_step -> {forward, vae_loss, backward,
// optimizer_step}; VAEImpl::{encode, reparameterize, decode}.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <tuple>

#include "diagnostics/input_error.h"
#include "mnist_iter.h"
#include "trainer_options.h"
#include "trainer_runtime.h"

namespace po = boost::program_options;

namespace fg::trainers {
namespace {

class VAEImpl : public torch::nn::Module {
 public:
  VAEImpl(int64_t inputs, int64_t hidden, int64_t latent)
      : enc_(register_module("enc", torch::nn::Linear(inputs, hidden))),
        mu_(register_module("mu", torch::nn::Linear(hidden, latent))),
        logvar_(register_module("logvar", torch::nn::Linear(hidden, latent))),
        dec_(register_module("dec", torch::nn::Linear(latent, hidden))),
        out_(register_module("out", torch::nn::Linear(hidden, inputs))) {}

  TRAINER_FRAME std::pair<torch::Tensor, torch::Tensor> encode(const torch::Tensor& x) {
    torch::Tensor h = torch::relu(enc_->forward(x));
    return {mu_->forward(h), logvar_->forward(h)};
  }
  // z = mu + sigma * eps, so the sampling step stays differentiable.
  TRAINER_FRAME torch::Tensor reparameterize(const torch::Tensor& mu, const torch::Tensor& logvar) {
    if (!is_training()) return mu;
    torch::Tensor std = torch::exp(0.5 * logvar);
    return mu + std * torch::randn_like(std);
  }
  TRAINER_FRAME torch::Tensor decode(const torch::Tensor& z) {
    return torch::sigmoid(out_->forward(torch::relu(dec_->forward(z))));
  }
  // (reconstruction, mu, logvar)
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> forward(const torch::Tensor& x) {
    auto [mu, logvar] = encode(x);
    return {decode(reparameterize(mu, logvar)), mu, logvar};
  }

 private:
  torch::nn::Linear enc_, mu_, logvar_, dec_, out_;
};
TORCH_MODULE(VAE);

// Summed over the batch: BCE(reconstruction, x) + KL(q(z|x) || N(0, I)).
TRAINER_FRAME torch::Tensor vae_loss(const torch::Tensor& recon, const torch::Tensor& x, const torch::Tensor& mu,
                                     const torch::Tensor& logvar) {
  torch::Tensor bce = torch::binary_cross_entropy(recon, x, {}, at::Reduction::Sum);
  torch::Tensor kld = -0.5 * torch::sum(1 + logvar - mu.pow(2) - logvar.exp());
  return bce + kld;
}

TRAINER_FRAME torch::Tensor forward(VAE& model, const torch::Tensor& x) {
  RECORD_USER_SCOPE("forward");
  auto [recon, mu, logvar] = model->forward(x);
  return vae_loss(recon, x, mu, logvar);
}

TRAINER_FRAME void backward(torch::Tensor& loss) {
  RECORD_USER_SCOPE("backward");
  loss.backward();
}

TRAINER_FRAME void optimizer_step(torch::optim::Adam& optimizer) {
  RECORD_USER_SCOPE("optimizer_step");
  optimizer.step();
}

// One Adam step; returns the batch's summed loss.
TRAINER_FRAME double train_step(VAE& model, torch::optim::Adam& optimizer, const torch::Tensor& x) {
  RECORD_USER_SCOPE("train_step");
  optimizer.zero_grad();
  torch::Tensor loss = forward(model, x);
  backward(loss);
  optimizer_step(optimizer);
  return loss.item<double>();
}

// Mean loss per image on the test set (decoding the posterior mean).
TRAINER_FRAME double evaluate(VAE& model, MNISTIter& data, const c10::Device& device) {
  torch::NoGradGuard no_grad;
  model->eval();
  double loss_sum = 0;
  int64_t seen = 0;
  Batch batch;
  for (data.reset(); data.next(batch);) {
    torch::Tensor x = batch.images.to(device);
    loss_sum += forward(model, x).item<double>();
    seen += batch.size;
  }
  model->train();
  return loss_sum / double(seen);
}

struct EpochResult {
  double mean_loss = 0;
  int64_t samples = 0;
};

TRAINER_FRAME EpochResult train_epoch(VAE& model, torch::optim::Adam& optimizer, MNISTIter& data,
                                      const TrainerOptions& opts, const c10::Device& device, ProfilerTrace& trace) {
  EpochResult r;
  double loss_sum = 0;
  int64_t steps = 0;
  Batch batch;
  for (data.reset(); data.next(batch);) {
    torch::Tensor x = device.is_cuda() ? batch.images.to(device) : batch.images;
    trace.before_step();
    loss_sum += train_step(model, optimizer, x);
    trace.after_step();
    r.samples += batch.size;
    if (++steps == opts.max_batches) break;
  }
  r.mean_loss = loss_sum / double(r.samples);
  return r;
}

int vae_main(int argc, char** argv) {
  TrainerOptions opts;
  opts.lr = 1e-3;
  opts.batch_size = 128;
  opts.epochs = 2;  // ~13 s on one core (OpenBLAS) with 60000 images
  int64_t hidden = 400, latent = 20;
  po::options_description model("Model options");
  model.add_options()
      ("hidden", po::value(&hidden)->default_value(hidden), "width of the encoder and decoder hidden layers")
      ("latent", po::value(&latent)->default_value(latent), "latent dimensions");
  if (!parse_trainer_options(argc, argv, "vae_train",
                             "Trains a variational autoencoder (BCE + KL loss, Adam) on MNIST IDX files and prints per\n"
                             "epoch: train and test loss per image, samples/s.",
                             "  mnist_synth --out /tmp/mnist && vae_train --data /tmp/mnist --epochs 1\n"
                             "  vae_train --data /tmp/mnist --latent 2 --threads 1 --max-batches 50\n"
                             "  fgtool record -o vae.data -- vae_train --data /tmp/mnist --epochs 1\n",
                             model, opts))
    return 0;
  if (hidden < 1 || hidden > 100000) throw UsageError("--hidden must be between 1 and 100000");
  if (latent < 1 || latent > 100000) throw UsageError("--latent must be between 1 and 100000");
  c10::Device device = select_device(opts.device);
  int threads = configure_threads(opts);
  torch::manual_seed(opts.seed);

  MnistSplit train = load_mnist_split(opts.data, "train");
  MnistSplit test = load_mnist_split(opts.data, "t10k");
  MNISTIter train_iter(train, opts.batch_size, /*shuffle=*/true, opts.seed, PixelScaling::unit_range);
  MNISTIter test_iter(test, 1000, /*shuffle=*/false, opts.seed, PixelScaling::unit_range);
  if (test_iter.input_size() != train_iter.input_size())
    throw InputError(test.images.path + ": image size differs from the training images'");

  const int64_t inputs = train_iter.input_size();
  VAE net(inputs, hidden, latent);
  net->to(device);
  torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(opts.lr));
  std::printf("vae_train: %zu train / %zu test images (%ux%u) from %s; model %lld-%lld-%lld-%lld-%lld; batch %lld, lr %g; %d threads on %s\n",
              train.size(), test.size(), train.images.rows, train.images.cols, opts.data.c_str(), (long long)inputs,
              (long long)hidden, (long long)latent, (long long)hidden, (long long)inputs, (long long)opts.batch_size, opts.lr,
              threads, opts.device.c_str());
  std::printf("initial: val_loss %.4f\n", evaluate(net, test_iter, device));
  std::fflush(stdout);

  ProfilerTrace trace(opts.trace, /*warmup_steps=*/1, opts.trace_steps);
  Stopwatch total;
  for (int epoch = 1; epoch <= opts.epochs; ++epoch) {
    Stopwatch clock;
    EpochResult r = train_epoch(net, optimizer, train_iter, opts, device, trace);
    double seconds = clock.seconds();
    double val = evaluate(net, test_iter, device);
    std::printf("epoch %d/%d: train_loss %.4f val_loss %.4f samples %lld samples/s %.0f time %.2fs\n", epoch, opts.epochs, r.mean_loss,
                val, (long long)r.samples, double(r.samples) / seconds, seconds);
    std::fflush(stdout);
  }
  trace.finish();
  std::printf("done: %.2fs\n", total.seconds());
  return 0;
}

}  // namespace
}  // namespace fg::trainers

int main(int argc, char** argv) {
  return fg::trainers::run_trainer("vae_train", [&] { return fg::trainers::vae_main(argc, argv); });
}
