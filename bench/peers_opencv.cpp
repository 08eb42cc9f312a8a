// OpenCV peers for `wsisa-bench ops`: the same operations on the same inputs,
// one thread. Prints "name median_ms min_ms max_ms" per operation.
// usage: wsisa-bench-opencv DIR REPEATS   (DIR holds the inputs written by wsisa-bench)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

static void timeit(const char *name, int repeats, const std::function<void()> &fn) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; i++) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%s %.3f %.3f %.3f\n", name, ms[ms.size() / 2], ms.front(), ms.back());
  std::fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DIR REPEATS\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  int repeats = std::max(1, std::atoi(argv[2]));
  cv::setNumThreads(1);
  cv::Mat rc = cv::imread(dir + "/rc.png", cv::IMREAD_GRAYSCALE);
  cv::Mat cand = cv::imread(dir + "/candidates.png", cv::IMREAD_GRAYSCALE);
  cv::Mat big = cv::imread(dir + "/big.png", cv::IMREAD_GRAYSCALE);
  cv::Mat rgb = cv::imread(dir + "/rgb.png", cv::IMREAD_COLOR);
  cv::Mat markers = cv::imread(dir + "/markers.tiff", cv::IMREAD_UNCHANGED);
  if (rc.empty() || cand.empty() || big.empty() || rgb.empty() || markers.empty()) {
    std::fprintf(stderr, "%s: missing inputs in %s\n", argv[0], dir.c_str());
    return 1;
  }
  cv::Mat disk = cv::getStructuringElement(cv::MORPH_ELLIPSE, cv::Size(19, 19));
  cv::Mat out, labels, stats, centroids, dist;
  timeit("opening_disk19", repeats, [&] { cv::morphologyEx(rc, out, cv::MORPH_OPEN, disk); });
  timeit("distance_transform", repeats,
         [&] { cv::distanceTransform(big, dist, cv::DIST_L2, cv::DIST_MASK_PRECISE); });
  timeit("label_8conn_stats", repeats, [&] {
    cv::connectedComponentsWithStats(cand, labels, stats, centroids, 8, CV_32S);
  });
  timeit("watershed", repeats, [&] {
    cv::Mat m = markers.clone();
    cv::watershed(rgb, m);
  });
  return 0;
}
