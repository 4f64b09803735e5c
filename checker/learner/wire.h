// The judge and the learner's process speak over one socketpair (SOCK_SEQPACKET, made by the
// judge before the learner starts, on the learner's descriptor 3): one message per send, device
// memory lent as descriptors (SCM_RIGHTS). The learner's words are claims at most: the judge
// reads the outputs itself, and nothing the learner says can improve its own verdict.
//
//   learner -> judge   Ready     its context is up, the filter installed (before any of the
//                                learner's code is loaded)
//                      Returned  (to a Probe) the probe's events, as for a call
//                      Loaded    the learner's object and the shims are loaded (or why not)
//                      Mapped    a loan is mapped (or why not)
//                      Returning the learner's function returned; the device's synchronisation
//                                follows (a hang from here on is a kernel's, not host code's)
//                      Returned  a call returned: its cudaError_t, then the synchronisation's
//                      Report    (emulator) what its emulator found during the call, before
//                                Returned
//                      Stuck     (emulator) a CUDA thread that never ends; the process ends
//                      Fault     (emulator) host code touched device memory: what, in text;
//                                the process ends with SIGSEGV right after
//                      Make      (emulator) a sampled kernel reads input values not made yet:
//                                the judge makes the pages at `address`, `bytes`, and says Made
//                      Written   (emulator) the words the call's kernels wrote in the tracked
//                                outputs (emu_codec.h), before Returned
//   judge -> learner   Probe     (before Load) a call of this process's own: a memset of `bytes`
//                                on its stream, timed as a call is (Returning, Returned): what
//                                a round trip costs beyond the events, measured before anything
//                                of the learner's can tamper with it
//                      Load      load the shims and the learner's object (after Ready; then
//                                Loaded)
//                      Lend      one allocation, its descriptor attached (emulator: its marks)
//                      Unlend    an allocation the judge frees: unmapped (no reply)
//                      Setup     (emulator) the options of the next call (no reply)
//                      Call      a packed call (remote_call.h)
//                      Made      the pages asked for are made
//                      Quit
// A message may carry a payload of bytes (emu_codec.h), sent right after it in pieces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "remote_call.h"

namespace cudalings::wire {

enum class Kind : std::uint32_t {
    Ready = 1,
    Loaded,
    Mapped,
    Returned,
    Lend,
    Call,
    Quit,
    Unlend,
    Returning,
    Setup,
    Report,
    Stuck,
    Fault,
    Make,
    Made,
    Written,
    Probe,
    Load
};

struct Message {
    Kind kind = Kind::Quit;
    // Lend, Unlend, Mapped: the loan's number. Probe, Call, and their Returning and Returned: the
    // exchange's number (the judge's count), which the answers repeat: an answer out of turn (a
    // second Returned, one said before its call was made) ends the learner's process.
    std::uint32_t loan = 0;
    std::uint64_t bytes = 0;
    std::uint64_t address = 0;     // Lend: the judge's address of the loan (the emulator's)
    std::int32_t status = 0;       // Returned: the call's cudaError_t; Loaded/Mapped: 0 = ok
    std::int32_t sync_status = 0;  // Returned: cudaDeviceSynchronize's after it
    std::int32_t last_status = 0;  // Returned: cudaGetLastError's after that
    std::int32_t context_ok = 1;   // Returned: the context still works (no sticky error)
    double ms = 0;                 // Ready: context start; Returned: the call's host time
    // Returned: the learner's events around the call on its stream, and to after the device's
    // synchronisation (microseconds). Claims, checked against the judge's clock.
    double on_stream_us = 0, whole_device_us = 0;
    std::uint32_t flags = 0;        // Ready: kFiltered | kNoCapabilities; Load: kSpin
    std::uint32_t payload = 0;      // bytes that follow the message (send_with, receive_with)
    char text[512] = {};            // why something failed
    kit::remote::CallMessage call;  // Call
};
inline constexpr std::uint32_t kFiltered = 1, kNoCapabilities = 2;
// Load: a timed check, so wait for the judge's messages without sleeping (wait_readable), as
// after a probe. The processes a timed check starts for its phases get no probes.
inline constexpr std::uint32_t kSpin = 4;
// Fault: `address` is the faulting instruction's offset in the learner's object.
inline constexpr std::uint32_t kFaultInStep = 4;

// One message, with at most 8 descriptors. False when the peer is gone.
bool send(int socket, const Message& m, const int* fds = nullptr, int count = 0);
// One message; descriptors that came with it are appended to `fds` (close-on-exec). False when
// the peer is gone or sent something that is not a whole message.
bool receive(int socket, Message& m, std::vector<int>* fds = nullptr);

// The same for a message of any fixed size (the spike's own: bench/fd_share_spike.cu).
bool send_bytes(int socket, const void* data, std::size_t bytes, const int* fds, int count);
bool receive_bytes(int socket, void* data, std::size_t bytes, std::vector<int>* fds);

// A message and its payload (at most kMaxPayload bytes), and the same on receipt: false when the
// peer is gone or the payload is not what the message announced.
inline constexpr std::uint32_t kMaxPayload = 16u << 20;
bool send_with(int socket, Message m, const std::string& payload, const int* fds = nullptr,
               int count = 0);
bool receive_with(int socket, Message& m, std::string& payload, std::vector<int>* fds = nullptr);

void set_text(Message& m, const std::string& text);

// Waits, without sleeping, until `socket` has something to read (or its peer is gone), for at
// most `seconds`; then returns, whether or not it has. A timed check's two processes wait so for
// each other's next message: a process that sleeps in recv through a millisecond call wakes up
// later, by tens to hundreds of microseconds, than one that slept through a short probe, and the
// judge's clock would count that against the learner's claim.
void wait_readable(int socket, double seconds);
inline constexpr double kSpinSeconds = 0.5;  // how long both processes wait so, then in recv

}  // namespace cudalings::wire
