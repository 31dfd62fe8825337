// A miniature libtorch training loop that touches every frame category the
// fgtool rules know about: a Dataset + DataLoader (data), a conv net and an
// MLP (forward: conv on oneDNN, Linear/addmm on OpenBLAS, relu/eltwise),
// backward through the autograd engine, an SGD optimizer step, a no-grad
// evaluation pass, and 2 OpenMP threads. Used only to record fixtures.
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// Decodes "raw bytes" into normalised float images, like an IDX reader would.
struct SyntheticImages : torch::data::datasets::Dataset<SyntheticImages> {
  explicit SyntheticImages(size_t n) : n_(n) {}
  torch::data::Example<> get(size_t index) override {
    std::vector<uint8_t> raw(28 * 28);
    uint32_t x = static_cast<uint32_t>(index) * 2654435761u + 1;
    for (auto& b : raw) {
      x ^= x << 13; x ^= x >> 17; x ^= x << 5;
      b = static_cast<uint8_t>(x);
    }
    auto img = torch::from_blob(raw.data(), {1, 28, 28}, torch::kUInt8).to(torch::kFloat32).div(255.0).sub(0.13).div(0.31);
    return {img, torch::tensor(static_cast<int64_t>(index % 10))};
  }
  torch::optional<size_t> size() const override { return n_; }
  size_t n_;
};

struct Net : torch::nn::Module {
  Net()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 5)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 5)))),
        fc1(register_module("fc1", torch::nn::Linear(32 * 4 * 4, 512))),
        fc2(register_module("fc2", torch::nn::Linear(512, 512))),
        fc3(register_module("fc3", torch::nn::Linear(512, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    x = x.view({x.size(0), -1});
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    return torch::log_softmax(fc3->forward(x), 1);
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc1, fc2, fc3;
};

}  // namespace

int main(int argc, char** argv) {
  int epochs = argc > 1 ? std::atoi(argv[1]) : 1;
  size_t images = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1024;
  torch::manual_seed(1);
  at::set_num_threads(2);
  auto net = std::make_shared<Net>();
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      SyntheticImages(images).map(torch::data::transforms::Stack<>()), 64);
  // A big matmul, the pure-GEMM case.
  auto a = torch::randn({512, 512}), b = torch::randn({512, 512});
  double checksum = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    net->train();
    for (auto& batch : *loader) {
      optimizer.zero_grad();
      auto out = net->forward(batch.data);
      auto loss = torch::nll_loss(out, batch.target);
      loss.backward();
      optimizer.step();
      checksum += torch::mm(a, b).sum().item<double>() * 1e-9;
    }
    torch::NoGradGuard no_grad;
    net->eval();
    for (auto& batch : *loader) checksum += net->forward(batch.data).sum().item<double>();
  }
  std::printf("checksum %.3f\n", checksum);
  return 0;
}
