//! The playground IR custom sections (`rotifer compile`).
