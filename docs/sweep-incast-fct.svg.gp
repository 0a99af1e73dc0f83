# Written by `syncsim plot`; run `gnuplot docs/sweep-incast-fct.svg.gp` to redraw.
set terminal svg size 900,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output "docs/sweep-incast-fct.svg"
set title "incast-pfc.yaml: 16->1 incast + victim, last completion"
set xlabel "fabric.links.host.bandwidth (Gbps)"
set ylabel "fct_max_s"
set grid
set key below
set datafile separator '\t'
set logscale x
set logscale y
$d0 << EOD
25	0.020804140159999998	25Gbps
50	0.010403402879999999	50Gbps
100	0.00528428864	100Gbps
200	0.00528388416	200Gbps
400	0.0052837536	400Gbps
EOD
$d1 << EOD
25	0.020803640959999998	25Gbps
50	0.01040290368	50Gbps
100	0.00520253504	100Gbps
200	0.00260236512	200Gbps
400	0.0025428275199999998	400Gbps
EOD
plot $d0 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.fabric.bandwidth=100Gbps", \
     $d1 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.fabric.bandwidth=400Gbps"
