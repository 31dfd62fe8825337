/* Test workload with known blocked time: the main thread sleeps 25 x 10 ms
 * in wait_for_batch and the loader thread 20 x 20 ms in wait_for_disk. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void nap_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}
__attribute__((noinline)) void wait_for_disk(void) { nap_ms(20); }
__attribute__((noinline)) void wait_for_batch(void) { nap_ms(10); }

static void *loader(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "loader");
  for (int i = 0; i < 20; i++) wait_for_disk();
  return NULL;
}

int main(void) {
  pthread_t th;
  pthread_create(&th, NULL, loader, NULL);
  for (int i = 0; i < 25; i++) wait_for_batch();
  pthread_join(th, NULL);
  puts("done");
  return 0;
}
