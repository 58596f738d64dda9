// The study's report.html charts (sim/src/study_report.cpp).
