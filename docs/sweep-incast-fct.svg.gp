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
25	0.0052046112	25Gbps
50	0.0026038047999999998	50Gbps
100	0.0013843231999999999	100Gbps
200	0.0013839648	200Gbps
400	0.0013837856	400Gbps
EOD
$d1 << EOD
25	0.0052038624	25Gbps
50	0.002603056	50Gbps
100	0.0013026528	100Gbps
200	0.00065310688	200Gbps
400	0.00066781568	400Gbps
EOD
plot $d0 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.fabric.bandwidth=100Gbps", \
     $d1 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.fabric.bandwidth=400Gbps"
