import SleepStaging

/// `[person]`: what the sleep classifier knows about the sleeper besides the heart. sleepecg's
/// ws-gru-mesa was trained with age and gender among its features (docs/sleep.md); unknown stays
/// unknown here, never a guess, and the classifier gives the network its training mean for it
/// (`WakeSleepClassifier.UnknownSubject.trainingMean`).
struct PersonSettings: Sendable, Equatable {
    /// 0: unknown.
    var birthYear = 0
    var sex = Sex.unknown

    enum Sex: String, CaseIterable, Sendable {
        case unknown = ""
        case female
        case male
    }

    /// Earliest accepted birth year (a typo such as 199 is refused, not taken as an age of 1800).
    static let earliestBirthYear = 1900

    /// The classifier's subject data for a night ending in `year`: age in whole years as of that
    /// year (sleepecg's `age` is years), gender as sleepecg codes it.
    func subject(inYear year: Int) -> SubjectData {
        let age = birthYear > 0 && year >= birthYear ? year - birthYear : nil
        let gender: SubjectData.Gender? = switch sex {
        case .unknown: nil
        case .female: .female
        case .male: .male
        }
        return SubjectData(age: age, gender: gender)
    }
}
