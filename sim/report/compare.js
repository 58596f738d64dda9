// compare.html's charts (sim/src/compare_html.cpp).
