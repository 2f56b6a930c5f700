// Prints the WSD learning rate at three steps; the install test checks them.
#include <iostream>

#include "lrkit/schedules/factory.hpp"

int main() {
  const auto lr = lrkit::schedules::parse_schedule("wsd(peak=1e-3, warmup=10, decay=20%, shape=linear)", 100);
  std::cout << lr(5) << " " << lr(50) << " " << lr(90) << "\n";
  return 0;
}
