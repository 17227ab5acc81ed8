import Foundation
import PayServiceCore
import PayServiceFuzzSupport

/// What an input is run through, chosen by name (`Fuzz/run.sh [SECONDS] [TARGET]`).
enum FuzzTarget: String, CaseIterable {
  /// Each line answered in process by `RequestHandler.handle(line:)`, on stores opened once, with
  /// the borrowed path checked against the general one (`RequestFuzzOracle`): the scanner, the
  /// params readers, pricing and every method, thousands of inputs a second.
  case requests
  /// The whole input as stdin of a `Server` on a fresh store (`FuzzOracle`): framing, line limits,
  /// pipelining and group commits too, a few hundred inputs a second at most (opening and migrating
  /// the store is most of the cost).
  case stdin
  /// Claims signed by the harness (`SignedPayloadOracle`): App Store transactions, renewal infos and
  /// notifications under the test chain, Stripe events under the test secret, Adyen items under the
  /// test HMAC key, Apple Pay payment data in EC_v1 tokens of a test authority, so that mutated
  /// dates, amounts, ids, environments and merchant tokens get past the signature to the code that
  /// reads them.
  case signed

  static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// One target's oracle, and the structure-aware mutator (which knows the methods, params and
/// configs the oracles serve).
final class FuzzHarness {
  let target: FuzzTarget
  private var requests: RequestFuzzOracle?
  private let stdin: FuzzOracle?
  private let signed: SignedPayloadOracle?
  private let mutator: RequestMutator
  /// Inputs checked by the current `requests` oracle.
  private var checked = 0
  /// After this many inputs the `requests` oracle starts over on fresh stores, which keeps the
  /// orders and charge tokens a long run accumulates from filling memory.
  static let inputsPerStore = 200_000

  init(_ target: FuzzTarget) {
    self.target = target
    do {
      requests = target == .requests ? try RequestFuzzOracle() : nil
      stdin = target == .stdin ? FuzzOracle() : nil
      signed = target == .signed ? try SignedPayloadOracle() : nil
      let configs = RequestFuzzOracle.configs()
      mutator = RequestMutator(handler: TestConfig.handler(try TestConfig.context(), backOffice: true), configs: configs)
    } catch {
      fail("cannot open a store: \(error)")
    }
  }

  /// A description of the first violation of the target's oracle, or nil.
  func check(_ bytes: [UInt8]) -> String? {
    switch target {
    case .stdin:
      return stdin!.check(bytes)
    case .signed:
      return signed!.check(bytes)
    case .requests:
      checked += 1
      if checked > Self.inputsPerStore {
        do { requests = try RequestFuzzOracle() } catch { fail("cannot open a store: \(error)") }
        checked = 1
      }
      return requests!.check(bytes)
    }
  }

  /// The structure-aware mutation `seed` picks, or nil (no line is JSON, or the result is longer
  /// than `maxSize`).
  func mutate(_ input: [UInt8], maxSize: Int, seed: UInt32) -> [UInt8]? {
    var random = SplitMix64(seed: UInt64(seed))
    return mutator.mutate(input, maxSize: maxSize, using: &random)
  }
}

/// The harness libFuzzer's callbacks use; set once before fuzzing starts, then used from the one
/// thread that libFuzzer calls back on.
nonisolated(unsafe) var fuzzing: FuzzHarness!

#if FUZZING
@_silgen_name("LLVMFuzzerMutate")
func LLVMFuzzerMutate(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int) -> Int

/// libFuzzer's hook for mutating an input: half the time the structure-aware mutation of one of
/// its JSON lines, otherwise (and when that declines) libFuzzer's own byte-level mutation, which
/// also inserts the dictionary's tokens and splices corpus inputs.
@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
  if let data, seed & 1 == 0,
    let mutated = fuzzing.mutate(Array(UnsafeBufferPointer(start: data, count: size)), maxSize: maxSize, seed: seed >> 1)
  {
    mutated.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: mutated.count) }
    return mutated.count
  }
  return LLVMFuzzerMutate(data, size, maxSize)
}
#endif
