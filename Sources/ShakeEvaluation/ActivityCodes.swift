// SPDX-License-Identifier: Apache-2.0
/// What the activity codes of the corpora `eval` knows stand for, so that a report reads without the corpus's
/// paper at hand.
public enum ActivityCodes {
    /// SisFall (Sucerquia, López and Vargas-Bonilla, Sensors 2017): daily living D01-D19 and falls F01-F15,
    /// in short.
    static let sisfall: [String: String] = [
        "D01": "walking slowly", "D02": "walking quickly", "D03": "jogging slowly", "D04": "jogging quickly",
        "D05": "stairs up and down, slowly", "D06": "stairs up and down, quickly",
        "D07": "sitting down slowly on a half-height chair, getting up",
        "D08": "sitting down quickly on a half-height chair, getting up",
        "D09": "sitting down slowly on a low chair, getting up",
        "D10": "sitting down quickly on a low chair, getting up",
        "D11": "trying to get up and collapsing into a chair", "D12": "lying down slowly from sitting, sitting up",
        "D13": "lying down quickly from sitting, sitting up", "D14": "turning from back to side while lying",
        "D15": "bending at the knees", "D16": "bending without bending the knees",
        "D17": "getting into and out of a car",
        "D18": "stumbling while walking", "D19": "jumping gently, reaching up",
        "F01": "slip while walking, forward fall", "F02": "slip while walking, backward fall",
        "F03": "slip while walking, sideways fall", "F04": "trip while walking, forward fall",
        "F05": "trip while jogging, forward fall", "F06": "fainting while walking, vertical fall",
        "F07": "fainting while walking, hands on a table", "F08": "forward fall getting up",
        "F09": "sideways fall getting up", "F10": "forward fall sitting down", "F11": "backward fall sitting down",
        "F12": "sideways fall sitting down", "F13": "fainting while seated, forward fall",
        "F14": "fainting while seated, backward fall", "F15": "fainting while seated, sideways fall",
    ]

    /// MobiFall (Vavoulas, Pediaditis, Spanakis and Tsiknakis, IEEE BIBE 2013): a phone in a trouser pocket;
    /// daily living and falls, in short. MobiAct, its successor, uses the same codes for these.
    static let mobifall: [String: String] = [
        "STD": "standing", "WAL": "walking", "JOG": "jogging", "JUM": "jumping, continuously",
        "STU": "stairs up", "STN": "stairs down", "SCH": "sitting down on a chair, getting up",
        "CSI": "stepping into a car", "CSO": "stepping out of a car",
        "FOL": "forward fall from standing, onto the hands", "FKL": "forward fall from standing, onto the knees",
        "SDL": "sideways fall from standing", "BSC": "backward fall trying to sit on a chair",
    ]

    /// The description of an activity code in a dataset, if the dataset is one `eval` knows.
    public static func describe(_ activity: String, dataset: String) -> String? {
        switch dataset.lowercased() {
        case "sisfall": sisfall[activity]
        case "mobifall", "mobiact": mobifall[activity]
        default: nil
        }
    }
}
