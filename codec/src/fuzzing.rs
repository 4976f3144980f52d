//! Entry points for the fuzz targets (kept in the library so they refactor with it).
