/* A TCP proxy for the benchmark's PostgreSQL runs: it holds every chunk, each way, for half of a
 * fixed delay before passing it on (a network's latency on loopback, where this kernel has no
 * netem), and counts round trips: a client's send after the server last spoke is one.
 *
 * One thread, epoll and a timerfd, so that the proxy adds little of its own to the delay.
 * Controlled on stdin/stdout: it prints its port, then answers "count" with the round trips since
 * the last "reset" (which it answers "ok").
 *
 *   cc -O2 -o pgdelay pgdelay.c && ./pgdelay 127.0.0.1 5432 500   # 500 us per round trip
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 4096
#define CHUNK 65536

struct chunk {
  struct chunk *next;
  uint64_t due;
  size_t length, sent;
  int target;
  char bytes[];
};

/* Per descriptor: its peer, whether it is a client's side, and the pair's last speaker. */
static int peer[MAX_FDS];
static int is_client[MAX_FDS];
static int *last_speaker[MAX_FDS];
static struct chunk *head, *tail; /* every chunk in flight, by due time (delays are equal) */
static uint64_t half_ns;
static long round_trips;
static int epoll, timer;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void watch(int fd) {
  struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
  epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

static void arm(void) {
  struct itimerspec when = {0};
  if (head) {
    uint64_t due = head->due;
    when.it_value.tv_sec = (time_t)(due / 1000000000u);
    when.it_value.tv_nsec = (long)(due % 1000000000u);
  }
  timerfd_settime(timer, TFD_TIMER_ABSTIME, &when, NULL);
}

static void close_pair(int fd) {
  int other = peer[fd];
  if (fd < 0) return;
  for (struct chunk **c = &head; *c;) {
    if ((*c)->target == fd || (*c)->target == other) {
      struct chunk *gone = *c;
      *c = gone->next;
      free(gone);
    } else {
      c = &(*c)->next;
    }
  }
  tail = head;
  while (tail && tail->next) tail = tail->next;
  if (last_speaker[fd]) free(last_speaker[fd]);
  last_speaker[fd] = NULL;
  if (other >= 0) last_speaker[other] = NULL;
  close(fd);
  if (other >= 0) close(other);
}

/* Sends what is due; a chunk the socket will not take whole waits for the next tick. */
static void deliver(void) {
  uint64_t now = now_ns();
  while (head && head->due <= now) {
    ssize_t n = send(head->target, head->bytes + head->sent, head->length - head->sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      struct chunk *gone = head;
      head = head->next;
      if (!head) tail = NULL;
      free(gone);
      continue;
    }
    head->sent += (size_t)n;
    if (head->sent < head->length) break;
    struct chunk *done = head;
    head = head->next;
    if (!head) tail = NULL;
    free(done);
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: pgdelay HOST PORT DELAY_MICROSECONDS\n");
    return 64;
  }
  struct sockaddr_in target = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  inet_pton(AF_INET, argv[1], &target.sin_addr);
  half_ns = (uint64_t)atol(argv[3]) * 1000u / 2;

  int listener = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(listener, (struct sockaddr *)&local, sizeof local) != 0 || listen(listener, 128) != 0) {
    perror("pgdelay: listen");
    return 1;
  }
  socklen_t size = sizeof local;
  getsockname(listener, (struct sockaddr *)&local, &size);
  printf("%d\n", ntohs(local.sin_port));
  fflush(stdout);

  epoll = epoll_create1(0);
  timer = timerfd_create(CLOCK_MONOTONIC, 0);
  watch(listener);
  watch(timer);
  watch(0);
  for (int i = 0; i < MAX_FDS; i++) peer[i] = -1;
  static char buffer[CHUNK];
  struct epoll_event events[64];
  for (;;) {
    int ready = epoll_wait(epoll, events, 64, -1);
    if (ready < 0 && errno == EINTR) continue;
    for (int i = 0; i < ready; i++) {
      int fd = events[i].data.fd;
      if (fd == timer) {
        uint64_t ticks;
        if (read(timer, &ticks, sizeof ticks) < 0) { /* spurious */ }
        deliver();
        arm();
      } else if (fd == 0) {
        char line[64];
        if (!fgets(line, sizeof line, stdin)) return 0;
        if (strncmp(line, "count", 5) == 0) printf("%ld\n", round_trips);
        else if (strncmp(line, "reset", 5) == 0) { round_trips = 0; printf("ok\n"); }
        fflush(stdout);
      } else if (fd == listener) {
        int client = accept(listener, NULL, NULL);
        if (client < 0 || client >= MAX_FDS) { if (client >= 0) close(client); continue; }
        int server = socket(AF_INET, SOCK_STREAM, 0);
        if (server < 0 || server >= MAX_FDS || connect(server, (struct sockaddr *)&target, sizeof target) != 0) {
          close(client);
          if (server >= 0) close(server);
          continue;
        }
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        peer[client] = server;
        peer[server] = client;
        is_client[client] = 1;
        is_client[server] = 0;
        int *speaker = malloc(sizeof *speaker);
        *speaker = 0; /* the server "spoke" first: the client's first send is a round trip */
        last_speaker[client] = speaker;
        last_speaker[server] = speaker;
        watch(client);
        watch(server);
      } else {
        ssize_t n = recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) {
          close_pair(fd);
          continue;
        }
        int *speaker = last_speaker[fd];
        if (is_client[fd] && speaker && *speaker == 0) round_trips++;
        if (speaker) *speaker = is_client[fd];
        if (half_ns == 0 && !head) {
          ssize_t sent = send(peer[fd], buffer, (size_t)n, MSG_NOSIGNAL);
          if (sent == n) continue;
          if (sent < 0) sent = 0;
          memmove(buffer, buffer + sent, (size_t)(n - sent));
          n -= sent;
        }
        struct chunk *c = malloc(sizeof *c + (size_t)n);
        c->next = NULL;
        c->due = now_ns() + half_ns;
        c->length = (size_t)n;
        c->sent = 0;
        c->target = peer[fd];
        memcpy(c->bytes, buffer, (size_t)n);
        if (tail) tail->next = c; else head = c;
        tail = c;
        if (head == c) arm();
      }
    }
  }
}
